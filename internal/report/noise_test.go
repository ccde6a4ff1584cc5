package report

import (
	"math"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/study"
)

// The noise floor is the typical step's A/A difference, not the worst
// step's, and it is known exactly on synthetic data.
func TestNoiseFloorIsTheTypicalA_ADifference(t *testing.T) {
	s := &study.Study{Name: "x", Repetitions: 2, AA: "a",
		Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Load:     study.Plan{Steps: []*study.Step{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}}}}
	base := s.Matrix()[0]
	twin, ok := s.Twin()
	if !ok {
		t.Fatal("no twin")
	}
	// The twin's median latency over the base's: 1.10 in s1, 1.02 in s2,
	// and 5 in s3, a step some passing load disturbed.
	ratio := map[string]float64{"s1": 1.10, "s2": 1.02, "s3": 5}
	var units []*analysis.Unit
	for rep := 1; rep <= 2; rep++ {
		for step, r := range ratio {
			units = append(units,
				&analysis.Unit{Rep: rep, Variant: base, Step: step, Summary: metrics.Summary{Latency: metrics.Distribution{P50: 2, P99: 4}, ThroughputRPS: 100}},
				&analysis.Unit{Rep: rep, Variant: twin, Step: step, Summary: metrics.Summary{Latency: metrics.Distribution{P50: 2 * r, P99: 4}, ThroughputRPS: 100}})
		}
	}
	f := noiseFloor(analysis.NewDataset(s, units))
	if math.Abs(f.share-0.10) > 1e-9 {
		t.Fatalf("floor %v, want the median step's 10%%", f.share)
	}
	if len(f.section.Tables) != 1 || len(f.section.Tables[0].Rows) != 3 {
		t.Fatalf("A/A table %+v", f.section.Tables)
	}
	s.AA = ""
	if f := noiseFloor(analysis.NewDataset(s, units)); f.share != 0 || len(f.section.Text) == 0 {
		t.Fatalf("a run without a twin: %+v", f)
	}
}
