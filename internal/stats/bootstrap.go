package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultResamples is used when a resamples argument is ≤ 0. With 10,000
// resamples the Monte-Carlo wobble of a 95% interval's ends is well below
// the three digits a report prints.
const DefaultResamples = 10_000

// BootstrapMedianCI returns a percentile-bootstrap confidence interval for
// the median at the given level: the sample is resampled with replacement
// and the interval is the middle level fraction of the resampled medians.
// Unlike MeanCI it assumes no distribution shape, which suits skewed
// latency data. The same seed always gives the same interval. NaN for no
// data, any NaN, or a level outside (0, 1); a single value or all-equal
// values give a zero-width interval at that value.
func BootstrapMedianCI(xs []float64, level float64, resamples int, seed uint64) (lo, hi float64) {
	if !usable(level, xs) {
		return math.NaN(), math.NaN()
	}
	r := newRand(seed)
	buf := make([]float64, len(xs))
	meds := make([]float64, resampleCount(resamples))
	for i := range meds {
		meds[i] = resampleMedian(xs, buf, r)
	}
	return percentileInterval(meds, level)
}

// RatioCI returns median(a)/median(b) with a percentile-bootstrap interval
// that resamples a and b independently, as fits two separate sets of runs.
// It is meant for positive quantities such as latencies or throughputs:
// it returns NaN if median(b) ≤ 0 or median(a) < 0, as well as for the
// cases where BootstrapMedianCI does. A resample whose b median is 0 counts
// as an infinite ratio (or 1 when a's is 0 too), so zeros in b widen the
// interval instead of breaking it.
func RatioCI(a, b []float64, level float64, resamples int, seed uint64) (ratio, lo, hi float64) {
	nan := math.NaN()
	if !usable(level, a) || !usable(level, b) {
		return nan, nan, nan
	}
	ma, mb := Median(a), Median(b)
	if !(mb > 0) || !(ma >= 0) {
		return nan, nan, nan
	}
	r := newRand(seed)
	bufA, bufB := make([]float64, len(a)), make([]float64, len(b))
	ratios := make([]float64, resampleCount(resamples))
	for i := range ratios {
		ratios[i] = ratioOf(resampleMedian(a, bufA, r), resampleMedian(b, bufB, r))
	}
	lo, hi = percentileInterval(ratios, level)
	return ma / mb, lo, hi
}

func ratioOf(x, y float64) float64 {
	if y == 0 {
		if x == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return x / y
}

func usable(level float64, xs []float64) bool {
	return validLevel(level) && len(xs) > 0 && !slices.ContainsFunc(xs, math.IsNaN)
}

func resampleCount(n int) int {
	if n <= 0 {
		return DefaultResamples
	}
	return n
}

// newRand returns the PCG generator for a seed; the second PCG word is a
// fixed constant so that the seed alone determines the stream.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x853C49E6748FEA9B))
}

// percentileInterval sorts stats in place and returns its central level
// fraction.
func percentileInterval(stats []float64, level float64) (lo, hi float64) {
	slices.Sort(stats)
	return quantileSorted(stats, (1-level)/2), quantileSorted(stats, (1+level)/2)
}

// resampleMedian draws len(xs) values of xs with replacement into buf and
// returns their median.
func resampleMedian(xs, buf []float64, r *rand.Rand) float64 {
	for i := range buf {
		buf[i] = xs[r.IntN(len(xs))]
	}
	return medianInPlace(buf)
}

// medianInPlace computes the median by selection rather than sorting, so
// a bootstrap over large raw samples stays linear per resample. It
// reorders s.
func medianInPlace(s []float64) float64 {
	k := len(s) / 2
	upper := selectKth(s, k)
	if len(s)%2 == 1 {
		return upper
	}
	lower := slices.Max(s[:k]) // selection left s[:k] ≤ s[k]
	if lower == upper {
		return upper
	}
	return lower + (upper-lower)/2
}

// selectKth reorders s so that s[k] is its k-th smallest value, with
// nothing larger before it and nothing smaller after it (Hoare's
// quickselect with a median-of-three pivot, which also copes well with
// the many ties of integer-microsecond latencies).
func selectKth(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default: // j < k < i: s[k] equals the pivot
			return s[k]
		}
	}
	return s[k]
}
