package report

import (
	"fmt"
	"math"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/stats"
)

// floor is how far two identical deployments came apart in this run.
type floor struct {
	share   float64 // the noise floor the verdicts use
	section analysis.Section
}

// noiseFloor compares the run's A/A pair: one variant deployed twice per
// repetition, independently. Identical systems differ only by the
// machine's noise, so no claimed difference smaller than theirs is real.
func noiseFloor(ds *analysis.Dataset) floor {
	sec := analysis.Section{Title: "Noise floor: the same system twice (A/A)"}
	twin, ok := ds.Study.Twin()
	if !ok {
		sec.Text = append(sec.Text, "This run has no A/A pair (the study says aa: none), so this machine's noise is not known here and the verdicts assume none.")
		return floor{section: sec}
	}
	base := twin
	base.Twin = false
	t := analysis.Table{
		Caption: fmt.Sprintf("%s deployed twice in each repetition (the second as %s): the second's figure over the first's, geometric mean over runs with its 95%% interval.", base.Key(), twin.Key()),
		Header:  []string{"step", "runs", "p50 ratio", "p99 ratio", "throughput ratio"},
	}
	// Per step, how far apart the two came in median latency, as a share.
	var apart []float64
	worst, worstStep := 0.0, ""
	metrics := []func(u *analysis.Unit) float64{
		func(u *analysis.Unit) float64 { return u.Summary.Latency.P50 },
		func(u *analysis.Unit) float64 { return u.Summary.Latency.P99 },
		func(u *analysis.Unit) float64 { return u.Summary.ThroughputRPS },
	}
	for _, st := range ds.Study.Load.Steps {
		row := []string{st.Name, ""}
		for i, f := range metrics {
			ratios := analysis.Paired(ds.PerRun(twin.Key(), st.Name, f), ds.PerRun(base.Key(), st.Name, f), analysis.Ratio)
			row[1] = fmt.Sprint(len(ratios))
			if len(ratios) == 0 {
				row = append(row, "–")
				continue
			}
			gm, lo, hi := stats.GeoMeanCI(ratios, 0.95)
			cell := fmt.Sprintf("%.3f", gm)
			if !math.IsNaN(lo) {
				cell += fmt.Sprintf(" (%.3f–%.3f)", lo, hi)
			}
			row = append(row, cell)
			if i == 0 && gm > 0 {
				d := math.Expm1(math.Abs(math.Log(gm)))
				apart = append(apart, d)
				if d > worst {
					worst, worstStep = d, st.Name
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Tables = append(sec.Tables, t)
	if len(apart) == 0 {
		sec.Text = append(sec.Text, "The A/A pair was not measured in this run, so the verdicts assume no noise floor.")
		return floor{section: sec}
	}
	// The median over steps, not the worst: one step disturbed by a
	// passing load would otherwise veto every verdict; the worst is shown.
	typical := stats.Median(apart)
	sec.Text = append(sec.Text, fmt.Sprintf("Two deployments of the same system on this machine came apart by %s in median latency on a typical step (the median over %d steps of the geometric-mean difference), and by up to %s (step %s). "+
		"The typical figure is the noise floor: the verdicts below never call a smaller difference real.", analysis.Pct(typical), len(apart), analysis.Pct(worst), worstStep))
	return floor{share: typical, section: sec}
}
