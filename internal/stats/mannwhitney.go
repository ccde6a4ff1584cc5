package stats

import (
	"cmp"
	"math"
	"slices"
)

// MannWhitney runs the two-sided Mann-Whitney U (Wilcoxon rank-sum) test,
// which asks whether values from one sample tend to be larger than values
// from the other without assuming normality — right for latency data.
//
// u is the statistic for a: the number of (a, b) pairs with a > b, ties
// counting one half, so u/(len(a)·len(b)) estimates P(a > b). Textbooks
// often report min(u, len(a)·len(b) − u) instead.
//
// p uses the normal approximation with tie correction and continuity
// correction (as R's wilcox.test with exact = FALSE and SciPy's
// method="asymptotic"). It is accurate for at least 8 values per sample;
// below that treat p as a rough guide. All-equal data gives p = 1; empty
// input or any NaN gives NaN.
func MannWhitney(a, b []float64) (u, p float64) {
	na, nb := len(a), len(b)
	if na == 0 || nb == 0 || slices.ContainsFunc(a, math.IsNaN) || slices.ContainsFunc(b, math.IsNaN) {
		return math.NaN(), math.NaN()
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, na+nb)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int { return cmp.Compare(x.v, y.v) })

	var rankSumA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+1+j) / 2 // mean of ranks i+1 … j
		t := float64(j - i)
		ties += t*t*t - t
		for _, o := range all[i:j] {
			if o.fromA {
				rankSumA += rank
			}
		}
		i = j
	}
	u = rankSumA - float64(na*(na+1))/2

	n := float64(na + nb)
	mu := float64(na) * float64(nb) / 2
	variance := float64(na) * float64(nb) / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := math.Max(math.Abs(u-mu)-0.5, 0) / math.Sqrt(variance)
	return u, math.Erfc(z / math.Sqrt2)
}
