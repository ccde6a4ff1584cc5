package report

import (
	"fmt"
	"math"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/stats"
)

// sliceSpread splits each interleaved step's noise into its part between
// deployments (repetitions) and within one (slice to slice), from the log
// p50 of every slice, per variant, the median over variants shown. It is
// why the intervals are over repetitions: when the part between
// deployments dominates, more slices narrow nothing. false when no step
// has slices of two repetitions.
func sliceSpread(ds *analysis.Dataset) (analysis.Table, bool) {
	t := analysis.Table{
		Caption: "Interleaved steps: where the noise of a slice's p50 is, as one-way random-effects analysis of variance of its log splits it, per variant, the median over variants shown. Between deployments is a repetition's own level (placement, JIT, luck), within one is slice to slice. The intervals of the verdicts are over repetitions, which hold both; when the part between deployments dominates, more or finer slices narrow nothing, more repetitions do.",
		Header:  []string{"step", "variants", "repetitions", "slices each", "σ̂ between deployments", "σ̂ within one, slice to slice", "share between"},
	}
	for _, st := range ds.Study.Load.Steps {
		if !st.Interleaved {
			continue
		}
		var betweens, withins, shares, reps, slices []float64
		for _, v := range ds.Variants {
			var groups [][]float64
			n := 0
			for _, u := range ds.Units(v.Key(), st.Name) {
				if u.Slices == nil || !u.AuditOK() {
					continue
				}
				var g []float64
				for _, s := range u.Slices.Slices {
					if s.P50Ms > 0 {
						g = append(g, math.Log(s.P50Ms))
					}
				}
				groups, n = append(groups, g), n+len(g)
			}
			b, w, ok := stats.Components(groups)
			if !ok {
				continue
			}
			betweens, withins = append(betweens, b), append(withins, w)
			if b+w > 0 {
				shares = append(shares, b/(b+w))
			}
			reps, slices = append(reps, float64(len(groups))), append(slices, float64(n)/float64(len(groups)))
		}
		if len(betweens) == 0 {
			continue
		}
		t.Rows = append(t.Rows, []string{st.Name, fmt.Sprint(len(betweens)), analysis.Num(stats.Median(reps), 0), analysis.Num(stats.Median(slices), 1),
			analysis.Pct(math.Sqrt(stats.Median(betweens))), analysis.Pct(math.Sqrt(stats.Median(withins))), analysis.Pct(stats.Median(shares))})
	}
	return t, len(t.Rows) > 0
}
