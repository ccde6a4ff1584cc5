package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/study"
)

// Every file kind reads back what was written, through the one writer and
// the one reader that the runner, the CLI and the report all use.
func TestEveryFileKindRoundTrips(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	summary := metrics.Summary{Model: "open", StartedAt: at, Requests: 3, Successes: 2, Errors: map[string]int64{"status 503": 1}, Warnings: []string{}}
	dir := StepDir(t.TempDir())
	run, err := Create(t.TempDir(), "s", "quick", at)
	if err != nil {
		t.Fatal(err)
	}
	vdir := run.VariantDir(1, "a")
	tests := []struct {
		name  string
		write func() error
		read  func() (any, error)
		want  any
	}{
		{"summary", func() error { return dir.WriteSummary(summary) }, func() (any, error) { return dir.ReadSummary() }, summary},
		{"warm-up", func() error { return dir.WriteWarmup(summary) }, func() (any, error) { w, err := dir.ReadWarmup(); return *w, err }, summary},
		{"resources", func() error {
			return dir.WriteResources(StepResources{Method: "cgroup v1", Services: []ServiceUsage{{Name: "api", CPUUserS: 1.5, Samples: []resources.Sample{{T: time.Second, MemBytes: 10}}}}})
		}, func() (any, error) { return dir.ReadResources() }, StepResources{Method: "cgroup v1", Services: []ServiceUsage{{Name: "api", CPUUserS: 1.5, Samples: []resources.Sample{{T: time.Second, MemBytes: 10}}}}}},
		{"events", func() error { return dir.WriteEvents([]EventRecord{{AtS: 1, Action: "kill", Target: "db"}}) },
			func() (any, error) { return dir.ReadEvents() }, []EventRecord{{AtS: 1, Action: "kill", Target: "db"}}},
		{"collected", func() error {
			return dir.WriteCollected(Collected{"stats": {{Instance: "api-1", Body: json.RawMessage(`"ok"`)}}})
		}, func() (any, error) { return dir.ReadCollected() }, Collected{"stats": {{Instance: "api-1", Body: json.RawMessage(`"ok"`)}}}},
		{"startup", func() error {
			return vdir.WriteStartup(Startup{FirstSuccessS: 2, FirstRequests: []FirstRequest{{Name: "x", Start: at, Status: 200}}})
		},
			func() (any, error) { s, err := vdir.ReadStartup(); return *s, err }, Startup{FirstSuccessS: 2, FirstRequests: []FirstRequest{{Name: "x", Start: at, Status: 200}}}},
		{"provenance", func() error { return run.WriteProvenance(Provenance{Study: "s", Cores: 2, StartedAt: at}) },
			func() (any, error) { return run.ReadProvenance() }, Provenance{Study: "s", Cores: 2, StartedAt: at}},
		{"state", func() error { return run.MarkFailed("rep-1/a", "crashed") },
			func() (any, error) { r, err := Open(run.Dir); return r.State().Failed, err }, map[string]string{"rep-1/a": "crashed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); err != nil {
				t.Fatal(err)
			}
			got, err := tt.read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("read back %+v\nwant %+v", got, tt.want)
			}
		})
	}
	t.Run("optional files absent", func(t *testing.T) {
		empty := StepDir(t.TempDir())
		if w, err := empty.ReadWarmup(); w != nil || err != nil {
			t.Fatalf("absent warm-up: %v, %v", w, err)
		}
		if s, err := run.VariantDir(9, "none").ReadStartup(); s != nil || err != nil {
			t.Fatalf("absent start-up: %v, %v", s, err)
		}
		if _, err := empty.ReadSummary(); err == nil {
			t.Fatal("a missing summary read without error")
		}
	})
}

// The study as run is what reports read, so it must come back whole:
// every field a report could use, with the profile applied.
func TestResolvedStudyRoundTrips(t *testing.T) {
	s, err := study.Load("../runner/testdata/features.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	run, err := Create(t.TempDir(), s.Name, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteStudy([]byte("study: x\n"), s); err != nil {
		t.Fatal(err)
	}
	got, err := run.ReadStudy()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(s)
	back, _ := json.Marshal(got)
	if string(want) != string(back) || len(got.Load.Steps) == 0 || len(got.Matrix()) != len(s.Matrix()) {
		t.Fatalf("the study did not come back whole:\n%s\n%s", want, back)
	}
}

// Whatever names a caller passes, what the run writes stays in the run
// directory, each name one directory of its own: the study file refuses
// such names, but the run directory does not depend on it.
func TestNamesStayInTheRunDirectory(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	// Deep enough that a regression writes in the test's own directory.
	outside := t.TempDir()
	root := filepath.Join(outside, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "results")
	run, err := Create(root, "../../../escaped", "../p", at)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(run.Dir) != root {
		t.Fatalf("run directory %s is not in %s", run.Dir, root)
	}
	names := []string{"../../../../../../victim", "..", ".", "", "a/b", "/abs", "%2E%2E", "%", "x\x00y", "gin@aa", "0.5ms"}
	dirs := map[string]string{}
	for _, name := range names {
		step := run.StepDir(1, name, name)
		if err := step.WriteSummary(metrics.Summary{Requests: 1}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if err := run.VariantDir(1, name).WriteStartup(Startup{}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		logs := run.LogDir(1, name)
		for what, dir := range map[string]string{"step": string(step), "variant": string(run.VariantDir(1, name)), "logs": logs} {
			rel, err := filepath.Rel(run.Dir, dir)
			if err != nil || !filepath.IsLocal(rel) {
				t.Errorf("%q: the %s directory %s leaves the run directory %s", name, what, dir, run.Dir)
			}
		}
		// One element each, and no two names share a directory.
		if filepath.Dir(filepath.Dir(string(step))) != filepath.Join(run.Dir, "runs", "rep-1") {
			t.Errorf("%q: step directory %s is not runs/rep-1/VARIANT/STEP", name, step)
		}
		if other, ok := dirs[string(step)]; ok {
			t.Errorf("%q and %q share the directory %s", name, other, step)
		}
		dirs[string(step)] = name
	}
	// Names that are one element are kept as they are.
	if got := run.StepDir(1, "gin@aa", "0.5ms"); string(got) != filepath.Join(run.Dir, "runs", "rep-1", "gin@aa", "0.5ms") {
		t.Errorf("a plain name was changed: %s", got)
	}
	// Nothing was written beside the results directory.
	err = filepath.WalkDir(outside, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(path, run.Dir+string(filepath.Separator)) {
			t.Errorf("written outside the run directory: %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
