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

// PercentileInterval returns the central level fraction of a bootstrap
// distribution (e.g. 0.025 and 0.975 quantiles for level 0.95), for
// callers that draw their own resamples with BlockResamples. It reorders
// stats; NaN for no values, any NaN, or a level outside (0, 1).
func PercentileInterval(stats []float64, level float64) (lo, hi float64) {
	if len(stats) == 0 || !validLevel(level) || slices.ContainsFunc(stats, math.IsNaN) {
		return math.NaN(), math.NaN()
	}
	return percentileInterval(stats, level)
}

// QuantilesInPlace returns the qs-quantiles of s (Hyndman & Fan type 7,
// as Quantile) by selection rather than sorting, so that a bootstrap over
// hundreds of thousands of latencies stays linear per resample. It
// reorders s. NaN for an empty s; s must hold no NaN and each q must lie
// in [0, 1].
func QuantilesInPlace(s []float64, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if len(s) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	// Largest quantile first: once s[k] is in place, everything before it
	// is ≤ s[k], so smaller quantiles are selected in s[:k] alone.
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case qs[a] > qs[b]:
			return -1
		case qs[a] < qs[b]:
			return 1
		}
		return 0
	})
	// Invariant: s[bound] (when bound < len(s)) is in its sorted place,
	// with s[:bound] ≤ s[bound] ≤ s[bound+1:].
	bound := len(s)
	for _, i := range order {
		h := qs[i] * float64(len(s)-1)
		lo := int(h)
		frac := h - float64(lo)
		var vlo float64
		end := len(s) // the next order statistic is the smallest of s[lo+1:end]
		if lo < bound {
			vlo = selectKth(s[:bound], lo)
			end = min(len(s), bound+1)
			bound = lo
		} else { // lo == bound: the previous quantile's position
			vlo = s[lo]
		}
		if frac == 0 || lo+1 >= len(s) {
			out[i] = vlo
			continue
		}
		out[i] = vlo + frac*(slices.Min(s[lo+1:end])-vlo)
	}
	return out
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
