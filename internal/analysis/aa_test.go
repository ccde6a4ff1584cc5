package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// The A/A pairs are the base's and the twin's units of the same step and
// repetition, both audited, in step order then by repetition: a
// repetition only one side measured is no pair, and one a side failed
// its audit is counted as left out.
func TestAAPairs(t *testing.T) {
	s := &study.Study{Name: "x", Repetitions: 3, AA: "a",
		Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Load:     study.Plan{Steps: []*study.Step{{Name: "s1"}, {Name: "s2"}}}}
	base := s.Matrix()[0]
	twin, _ := s.Twin()
	other := s.Matrix()[1]
	var units []*Unit
	add := func(v study.Variant, step string, rep int, ok bool) {
		units = append(units, &Unit{Rep: rep, Variant: v, Step: step, Audit: &results.Audit{OK: ok},
			Summary: metrics.Summary{Requests: int64(rep)}})
	}
	// Twin units first and in reverse: the pairs come out in order anyway.
	for rep := 3; rep >= 1; rep-- {
		add(twin, "s2", rep, true)
		add(twin, "s1", rep, rep != 2) // s1 of repetition 2 fails its audit
	}
	for rep := 1; rep <= 3; rep++ {
		add(base, "s1", rep, true)
		add(other, "s1", rep, true)
		if rep != 3 { // s2 of repetition 3 measured on the twin only
			add(base, "s2", rep, true)
		}
	}
	aa, ok := NewDataset(s, units).AAPairs()
	if !ok || aa.Base.Key() != "a" || aa.Twin.Key() == "a" || !aa.Twin.Twin {
		t.Fatalf("twin %+v, %v", aa, ok)
	}
	var got []string
	for _, p := range aa.Pairs {
		if p.Base.Variant.Key() != "a" || p.Twin.Variant.Key() != aa.Twin.Key() || p.Base.Rep != p.Twin.Rep || p.Base.Step != p.Step || p.Twin.Step != p.Step {
			t.Errorf("pair %s: base %s %s %d, twin %s %s %d", p.Step, p.Base.Variant.Key(), p.Base.Step, p.Base.Rep, p.Twin.Variant.Key(), p.Twin.Step, p.Twin.Rep)
		}
		got = append(got, fmt.Sprintf("%s/%d", p.Step, p.Base.Rep))
	}
	if strings.Join(got, " ") != "s1/1 s1/3 s2/1 s2/2" || aa.Failed != 1 {
		t.Errorf("pairs %v, %d left out; want s1/1 s1/3 s2/1 s2/2 and 1 (s1/2's audit)", got, aa.Failed)
	}
	s.AA = ""
	if _, ok := NewDataset(s, units).AAPairs(); ok {
		t.Error("a study without aa: has A/A pairs")
	}
}
