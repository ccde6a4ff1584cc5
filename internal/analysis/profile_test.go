package analysis

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/study"
)

const profiled = `study: p
variants:
  style: [a, b, c]
services:
  s: {command: x, ready: {tcp: "{addr}"}}
load:
  service: s
  steps:
    - {name: slow, params: {kind: closed}, requests: 1, targets: [{path: /}]}
    - {name: fast, params: {kind: closed}, requests: 1, targets: [{path: /}]}
    - {name: open, params: {kind: open}, requests: 1, targets: [{path: /}]}
profiles:
  quick: {variants: {style: [a]}, skip: [slow, open]}
`

// What a profile left out is told from the study file the run kept.
func TestSkippedByTheProfile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, study.FileName), []byte(profiled), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Parse("p.yaml", []byte(profiled), "quick")
	if err != nil {
		t.Fatal(err)
	}
	ds := NewDataset(s, nil)
	ds.Dir = dir
	for _, c := range []struct {
		where map[string]string
		want  []string
	}{
		{nil, []string{"slow (every variant)", "open (every variant)"}},
		{map[string]string{"kind": "closed"}, []string{"slow (every variant)"}},
	} {
		if got, err := ds.SkippedSteps(c.where); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("skipped steps %v: %v, %v; want %v", c.where, got, err, c.want)
		}
	}
	if got, err := ds.SkippedVariants(); err != nil || !slices.Equal(got, []string{"b (every step)", "c (every step)"}) {
		t.Errorf("skipped variants: %v, %v", got, err)
	}
	// In memory there is no file: nothing is said to be left out.
	if got, err := NewDataset(s, nil).SkippedSteps(nil); got != nil || err != nil {
		t.Errorf("in memory: %v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, study.FileName), []byte("study: ["), 0o644)
	broken := NewDataset(s, nil)
	broken.Dir = dir
	if _, err := broken.SkippedVariants(); err == nil || !strings.Contains(err.Error(), "the run's study file") {
		t.Errorf("a damaged file: %v", err)
	}
}

func TestPaperFigures(t *testing.T) {
	v := 200.0
	ds := &Dataset{Claims: &claims.File{Figures: map[string]claims.Figure{
		"t": {Points: map[string]float64{"grpc": 4348}}, "r": {Value: &v},
	}}}
	if ds.PaperPoint("t", "grpc") != 4348 || ds.PaperValue("r") != 200 {
		t.Fatalf("point %v value %v", ds.PaperPoint("t", "grpc"), ds.PaperValue("r"))
	}
	for _, x := range []float64{ds.PaperPoint("t", "rest"), ds.PaperPoint("none", "a"), ds.PaperValue("t"), (&Dataset{}).PaperValue("r")} {
		if x == x { // not NaN
			t.Errorf("an unpublished figure reads %v, want NaN", x)
		}
	}
}
