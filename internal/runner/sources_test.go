package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/msbench/msbench/internal/study"
)

// Another checkout's builds are made from its own root with the lab's
// placeholders, and only its variants are deployed with them.
func TestSourcesBuildFromTheirCheckout(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "site.txt"), []byte("base"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Lab{values: map[string]string{"root": t.TempDir(), "data": "/shared/data"}, progress: func(string, ...any) {}}
	s := &study.Study{Builds: []*study.Build{{Name: "site", Dir: ".", Command: "test -n '{data}' && cp site.txt {out}/"}}}
	hashes, err := l.buildSources(context.Background(), Sources{Axis: "build", Trees: map[string]Tree{"base": {Root: base, Study: s}}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if hashes["base/site"] == "" {
		t.Errorf("hashes %v, want base/site", hashes)
	}
	got, values := l.checkout(&study.Study{}, study.Variant{Values: [][2]string{{"build", "base"}}})
	if got != s || values["root"] != base {
		t.Errorf("BASE's variant deploys from %v with root %q, want its own study and %s", got, values["root"], base)
	}
	if text, err := os.ReadFile(filepath.Join(values["build.site"], "site.txt")); err != nil || string(text) != "base" {
		t.Errorf("BASE's build holds %q, %v", text, err)
	}
	own := &study.Study{}
	if got, values := l.checkout(own, study.Variant{Values: [][2]string{{"build", "new"}}}); got != own || values["root"] != l.values["root"] {
		t.Errorf("NEW's variant deploys from %v with root %q, want the run's", got, values["root"])
	}
}
