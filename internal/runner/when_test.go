package runner

import (
	"context"
	"slices"
	"testing"

	"github.com/msbench/msbench/internal/results"
)

// A service with when: starts in the variants it names only.
func TestWhen(t *testing.T) {
	dir, log, err := runStudy(t, "testdata/when.yaml", "", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, _ := results.Open(dir)
	for variant, want := range map[string][]string{"on": {"registry", "front"}, "off": {"front"}} {
		st, err := r.VariantDir(1, variant).ReadStartup()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, in := range st.Instances {
			got = append(got, in.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("variant %s started %v, want %v", variant, got, want)
		}
		if s, err := r.StepDir(1, variant, "s").ReadSummary(); err != nil || s.Successes != 10 {
			t.Errorf("variant %s: %v, %+v", variant, err, s)
		}
	}
}
