package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MedianCI returns the median with a distribution-free confidence
// interval for it at the given level: the order statistics x(k) and
// x(n+1−k) with the largest k for which P(k ≤ B ≤ n−k) ≥ level, B the
// number of values below the true median, Binomial(n, ½). The interval
// is the median's own, so the median always lies in it (the mean's
// interval need not hold the median: [1×6, 10×7] has median 10 and mean
// interval 3.0–8.7). Fewer values than any such k allows (fewer than 6
// at 95%) give lo and hi NaN; none, any NaN, or a level outside (0, 1)
// give all three NaN.
func MedianCI(xs []float64, level float64) (med, lo, hi float64) {
	nan := math.NaN()
	med = Median(xs)
	if math.IsNaN(med) || !validLevel(level) {
		return nan, nan, nan
	}
	n := len(xs)
	b := distuv.Binomial{N: float64(n), P: 0.5}
	k := 0
	for k+1 <= n/2 && 1-2*b.CDF(float64(k)) >= level {
		k++ // x(k+1) to x(n−k) still covers at level
	}
	if k == 0 {
		return med, nan, nan
	}
	s := sorted(xs)
	return med, s[k-1], s[n-k]
}
