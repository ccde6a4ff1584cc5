package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI returns the Student-t confidence interval for the mean at the
// given level (e.g. 0.95). It assumes roughly normal, independent values,
// which holds for per-run means of repeated benchmark runs but not for raw
// latencies within a run (use BlockBootstrapCI for those). NaN for fewer than two
// values, any NaN, or a level outside (0, 1).
func MeanCI(xs []float64, level float64) (lo, hi float64) {
	nan := math.NaN()
	if len(xs) < 2 || !validLevel(level) {
		return nan, nan
	}
	m, sd := Mean(xs), StdDev(xs)
	if math.IsNaN(m) || math.IsNaN(sd) {
		return nan, nan
	}
	half := tQuantile(1-(1-level)/2, float64(len(xs)-1)) * sd / math.Sqrt(float64(len(xs)))
	return m - half, m + half
}

// tQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom.
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}
