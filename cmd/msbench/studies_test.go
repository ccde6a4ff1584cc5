package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/study"

	// The sixth study, which lives in testdata: registered like any other.
	_ "github.com/msbench/msbench/cmd/msbench/testdata/studies/hello/analysis"
)

// A study is one folder: every studies/NAME/study.yaml is a study, whose
// analysis (registered through analyses.go, which go generate keeps
// current) finds in the file every step and axis it needs, and which the
// README's table lists.
func TestEveryStudyIsAFolder(t *testing.T) {
	names, err := study.List("../../studies")
	if err != nil || len(names) < 3 {
		t.Fatalf("studies: %v, %v", names, err)
	}
	want, err := analysis.ImportsFile("../../studies", "github.com/msbench/msbench")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile("analyses.go"); !bytes.Equal(got, want) {
		t.Fatal("analyses.go is stale: run go generate ./cmd/msbench (make build does)")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, err := study.Load(filepath.Join("../../studies", name, study.FileName), "")
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Errorf("studies/%s/study.yaml says study: %s", name, s.Name)
			}
			if _, ok := analysis.Lookup(name); !ok {
				t.Errorf("no analysis registered for %s", name)
			}
			if err := analysis.Check(s); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(filepath.Join("../../studies", name, "README.md")); err != nil {
				t.Errorf("the study has no README.md: %v", err)
			}
			if !bytes.Contains(readme, []byte("| `"+name+"` |")) {
				t.Errorf("README.md's table of studies has no row for %s", name)
			}
		})
	}
	for _, name := range analysis.Registered() {
		if !slices.Contains(names, name) && name != "hello" {
			t.Errorf("an analysis is registered for %s, which has no folder", name)
		}
	}
}

// The sixth study runs from its folder alone, through the real registry:
// its claim reaches the report.
func TestASixthStudyNeedsOnlyItsFolder(t *testing.T) {
	results := t.TempDir()
	var stdout, stderr bytes.Buffer
	// --repetitions overrides the study's one repetition.
	code := run(context.Background(), []string{"run", "testdata/studies/hello/study.yaml", "--root", "../..", "--results", results, "--repetitions", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if reps, _ := filepath.Glob(filepath.Join(results, "hello-*", "runs", "rep-*", "default", "greet", "summary.json")); len(reps) != 2 {
		t.Errorf("%d repetitions measured, want the 2 asked for: %v", len(reps), reps)
	}
	report, _ := filepath.Glob(filepath.Join(results, "hello-*", "report.html"))
	if len(report) != 1 {
		t.Fatalf("no report in %s:\n%s", results, stdout.String())
	}
	page, _ := os.ReadFile(report[0])
	for _, want := range []string{"A greeting is answered within 100 ms at the median.", "p50 ", "Step greet"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// A step the analysis needs, renamed away in the study file, is an error
// naming file, line and field before anything runs.
func TestAMissingNeedIsAStudyFileError(t *testing.T) {
	src, err := os.ReadFile("testdata/studies/hello/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(file, bytes.Replace(src, []byte("kind: greeting"), []byte("kind: welcome"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", file, "--root", "../.."}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), file+":12: load.steps: the hello analysis needs a step with params kind=greeting") {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
}
