// Package hello is the analysis of the smallest study: one metric, which
// its one claim (claims.yaml) is judged on.
package hello

import (
	"maps"
	"slices"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("hello", hello{}) }

type hello struct{}

var greetings = map[string]string{"kind": "greeting"}

func (hello) Needs() study.Needs {
	return study.Needs{Steps: []study.StepNeed{{Where: greetings, For: "the greeting's latency"}}, Metrics: []string{"greeting-p50-ms"}}
}

// Analyze measures the greeting's median latency in every run; the claim
// is judged on it.
func (hello) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	steps := ds.Steps(greetings)
	if len(steps) == 0 || len(ds.Variants) == 0 {
		return analysis.Result{}, nil
	}
	p50 := ds.PerRun(ds.Variants[0].Key(), steps[0].Name, func(u *analysis.Unit) float64 { return u.Summary.Latency.P50 })
	var perRun []float64
	for _, rep := range slices.Sorted(maps.Keys(p50)) {
		perRun = append(perRun, p50[rep])
	}
	return analysis.Result{Metrics: map[string]claims.Metric{"greeting-p50-ms": {PerRun: perRun, Unit: "ms", Note: "median latency of the greeting step"}}}, nil
}
