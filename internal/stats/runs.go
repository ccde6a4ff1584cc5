package stats

import (
	"math"
	"slices"
)

// The unit of replication is the run: two runs of the same system differ
// by more than the requests within one run suggest (another deployment,
// another moment of a shared machine), so a verdict on two systems rests
// on per-run values, one per run, and the intervals below come from how
// those values spread.

// GeoMeanCI returns the geometric mean of positive ratios (e.g. one
// NEW/BASE ratio per repetition) with a Student-t confidence interval on
// their logarithms at the given level, taken back by exp: the interval of
// a typical ratio, symmetric on the log scale as ratios are (1.25× and
// 0.8× are the same distance from 1). With one ratio lo and hi are NaN;
// with none, or any ratio not positive and finite, or a level outside
// (0, 1), all three are NaN.
func GeoMeanCI(ratios []float64, level float64) (gm, lo, hi float64) {
	nan := math.NaN()
	if len(ratios) == 0 || !validLevel(level) {
		return nan, nan, nan
	}
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		if !(r > 0) || math.IsInf(r, 1) {
			return nan, nan, nan
		}
		logs[i] = math.Log(r)
	}
	gm = math.Exp(Mean(logs))
	if len(logs) < 2 {
		return gm, nan, nan
	}
	l, h := MeanCI(logs, level)
	return gm, math.Exp(l), math.Exp(h)
}

// RunRatio compares two independent sets of per-run values (e.g. each
// run's p99 from two separate run directories): it returns the ratio of
// their means, mean(new)/mean(base), with Fieller's confidence interval
// at the given level, and n, the runs on the smaller side.
//
// Fieller's interval (Fieller 1954) is the set of ratios ρ for which
// mean(new) − ρ·mean(base) is not significantly different from 0 by a
// t-test; with unequal variances the t has the Welch–Satterthwaite degrees
// of freedom evaluated at the estimated ratio (the "Fieller–Welch"
// interval, Tamhane & Logan 2004). It is exact for normal per-run values,
// asymmetric as a ratio's uncertainty is, and needs no resampling, which
// with the 2 to 10 runs of a benchmark would only reproduce the few values
// there are. When mean(base) is itself not distinguishable from 0 the set
// is unbounded and lo, hi are −Inf, +Inf.
//
// Fewer than two runs on either side, any NaN or infinity, a mean(base)
// that is not positive, or a level outside (0, 1) give NaN for lo and hi
// (and for the ratio when it cannot be formed). Runs that were made as
// pairs (the same repetition of one run directory) are compared with
// PairedRunRatio instead.
func RunRatio(base, new []float64, level float64) (ratio, lo, hi float64, n int) {
	nan := math.NaN()
	n = min(len(base), len(new))
	if !finite(base) || !finite(new) || len(base) == 0 || len(new) == 0 {
		return nan, nan, nan, n
	}
	mb, mn := Mean(base), Mean(new)
	if !(mb > 0) {
		return nan, nan, nan, n
	}
	ratio = mn / mb
	if n < 2 || !validLevel(level) {
		return ratio, nan, nan, n
	}
	vb := sq(StdDev(base)) / float64(len(base))
	vn := sq(StdDev(new)) / float64(len(new))
	v := vn + ratio*ratio*vb // variance of mean(new) − ρ·mean(base) at ρ = ratio
	if v == 0 {
		return ratio, ratio, ratio, n
	}
	df := v * v / (vn*vn/float64(len(new)-1) + sq(ratio*ratio*vb)/float64(len(base)-1))
	t := tQuantile(1-(1-level)/2, df)
	// (mn − ρ·mb)² ≤ t²·(vn + ρ²·vb)  ⇔  a·ρ² − 2b·ρ + c ≤ 0
	a := mb*mb - t*t*vb
	b := mn * mb
	c := mn*mn - t*t*vn
	if a <= 0 {
		return ratio, math.Inf(-1), math.Inf(1), n
	}
	root := math.Sqrt(math.Max(b*b-a*c, 0))
	return ratio, (b - root) / a, (b + root) / a, n
}

// RunRatioIn is RunRatio with both ends clamped into rng, the values the
// ratio can take (NonNegative for a ratio of latencies or throughputs):
// with few runs and one side spread wide, Fieller's lower end can reach
// below 0 (base {100, 101, 102}, new {1, 50} gives −2.8), which no ratio
// of positive quantities is. An unbounded interval stays unbounded on the
// side rng leaves open (+Inf for NonNegative), so it still reads as one.
func RunRatioIn(base, new []float64, level float64, rng Range) (ratio, lo, hi float64, n int) {
	ratio, lo, hi, n = RunRatio(base, new, level)
	return ratio, rng.Clamp(lo), rng.Clamp(hi), n
}

// PairedRunRatio compares per-run values made in pairs, base[i] and
// new[i] in the same repetition (msbench run measures every variant in
// each repetition, so drift of the machine falls on both alike): the
// geometric mean of the per-pair ratios new[i]/base[i] with GeoMeanCI's
// interval, and n, the number of pairs. Pairing removes the
// repetition-to-repetition drift from the comparison; values from two
// separate run directories are not pairs, whatever their count, and go to
// RunRatio. All NaN when the lengths differ; see GeoMeanCI for the rest.
func PairedRunRatio(base, new []float64, level float64) (ratio, lo, hi float64, n int) {
	nan := math.NaN()
	if len(base) != len(new) {
		return nan, nan, nan, 0
	}
	ratios := make([]float64, len(base))
	for i := range base {
		ratios[i] = new[i] / base[i]
	}
	ratio, lo, hi = GeoMeanCI(ratios, level)
	return ratio, lo, hi, len(ratios)
}

// PairedRunDiff is PairedRunRatio for quantities compared by difference
// (error rates, often 0): the mean of the per-pair differences
// new[i] − base[i] with a t-interval on them (n − 1 degrees of freedom),
// and n, the number of pairs. All NaN when the lengths differ or a value
// is not finite; lo and hi NaN with fewer than two pairs; pairs that all
// differ alike give a zero-width interval.
func PairedRunDiff(base, new []float64, level float64) (diff, lo, hi float64, n int) {
	nan := math.NaN()
	if len(base) != len(new) || !finite(base) || !finite(new) || len(base) == 0 {
		return nan, nan, nan, 0
	}
	diffs := make([]float64, len(base))
	for i := range base {
		diffs[i] = new[i] - base[i]
	}
	lo, hi = MeanCI(diffs, level)
	return Mean(diffs), lo, hi, len(diffs)
}

// RunDiff is RunRatio for quantities compared by difference rather than
// ratio, such as error rates that are often 0: mean(new) − mean(base)
// with Welch's t-interval, and n, the runs on the smaller side. Fewer than
// two runs on a side, any NaN or infinity, or a level outside (0, 1) give
// NaN for lo and hi; all-equal values on both sides give a zero-width
// interval.
func RunDiff(base, new []float64, level float64) (diff, lo, hi float64, n int) {
	nan := math.NaN()
	n = min(len(base), len(new))
	if !finite(base) || !finite(new) || len(base) == 0 || len(new) == 0 {
		return nan, nan, nan, n
	}
	diff = Mean(new) - Mean(base)
	if n < 2 || !validLevel(level) {
		return diff, nan, nan, n
	}
	vb := sq(StdDev(base)) / float64(len(base))
	vn := sq(StdDev(new)) / float64(len(new))
	if vb+vn == 0 {
		return diff, diff, diff, n
	}
	df := sq(vb+vn) / (vb*vb/float64(len(base)-1) + vn*vn/float64(len(new)-1))
	half := tQuantile(1-(1-level)/2, df) * math.Sqrt(vb+vn)
	return diff, diff - half, diff + half, n
}

func sq(x float64) float64 { return x * x }

func finite(xs []float64) bool {
	return !slices.ContainsFunc(xs, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
}
