// Package hello is the analysis of the smallest study: one claim, judged
// on the step whose kind is greeting.
package hello

import (
	"fmt"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("hello", hello{}) }

type hello struct{}

var greetings = map[string]string{"kind": "greeting"}

func (hello) Needs() study.Needs {
	return study.Needs{Steps: []study.StepNeed{{Where: greetings, For: "the greeting's latency"}}}
}

func (hello) Analyze(ds *analysis.Dataset) ([]analysis.Section, error) {
	c := analysis.Claim{Text: "A greeting is answered within 100 ms at the median.", Published: "p50 < 100 ms"}
	steps := ds.Steps(greetings)
	if len(steps) == 0 || len(ds.Variants) == 0 {
		c.Verdict, c.Why = analysis.Undecided, "no greeting step in this run"
		return []analysis.Section{{Title: "The claim", Claims: []analysis.Claim{c}}}, nil
	}
	p50, ok := ds.Median(ds.Variants[0].Key(), steps[0].Name, func(u *analysis.Unit) float64 { return u.Summary.Latency.P50 })
	if !ok {
		c.Verdict, c.Why = analysis.Undecided, "the greeting step was not measured"
	} else {
		c.Measured = fmt.Sprintf("p50 %s ms", analysis.Num(p50, 2))
		c.Verdict, c.Why = analysis.VerdictOf(p50 < 100), "median latency of the greeting step"
	}
	return []analysis.Section{{Title: "The claim", Claims: []analysis.Claim{c}}}, nil
}
