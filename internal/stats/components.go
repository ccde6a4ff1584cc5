package stats

import "math"

// Components splits the spread of observations grouped by deployment
// (the slices of one repetition's interleaved step, grouped by
// repetition) into its two parts, as one-way random-effects analysis of
// variance does: between, the variance of a deployment's own level (its
// luck: where it was placed, what its JIT chose), and within, the
// variance from one observation to the next in one deployment (the
// machine's noise over a slice). ok is false without two groups of which
// one has two observations.
//
// The design matters for intervals: observations of one deployment share
// its luck, so n of them are worth far less than n deployments when
// between dominates, and an interval over slices would be too narrow
// (Kalibera & Jones 2013). Groups may differ in size (a slice lost to a
// crash); the between part then uses the effective group size n₀ of
// unbalanced designs. A negative estimate of between, which sampling
// gives when it is small, reads 0.
func Components(groups [][]float64) (between, within float64, ok bool) {
	var n, k int
	var sum float64
	var sumSq float64 // Σ n_i², for n₀
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		k++
		n += len(g)
		sumSq += float64(len(g) * len(g))
		for _, x := range g {
			sum += x
		}
	}
	if k < 2 || n <= k {
		return math.NaN(), math.NaN(), false
	}
	grand := sum / float64(n)
	var ssBetween, ssWithin float64
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		m := Mean(g)
		ssBetween += float64(len(g)) * (m - grand) * (m - grand)
		for _, x := range g {
			ssWithin += (x - m) * (x - m)
		}
	}
	msBetween := ssBetween / float64(k-1)
	msWithin := ssWithin / float64(n-k)
	n0 := (float64(n) - sumSq/float64(n)) / float64(k-1)
	return max(0, (msBetween-msWithin)/n0), msWithin, true
}
