package stats

import (
	"math"
	"slices"
)

// Mean returns the arithmetic mean, or NaN for no data.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// StdDev returns the sample standard deviation (n−1 denominator), or NaN
// for fewer than two values. It subtracts the mean first rather than using
// the sum of squares, which loses all precision for latencies that are
// large and close together.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Median returns the middle value (mean of the two middle values for an
// even count), or NaN for no data or any NaN.
func Median(xs []float64) float64 {
	return Quantile(xs, 0.5)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) by linear interpolation
// between order statistics (Hyndman & Fan type 7, the default of R and
// NumPy), so results match what readers get from those tools. It returns
// NaN for no data, any NaN, or q outside [0, 1].
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 || !(q >= 0 && q <= 1) || slices.ContainsFunc(xs, math.IsNaN) {
		return math.NaN()
	}
	return quantileSorted(sorted(xs), q)
}

// sorted returns a sorted copy, leaving the caller's slice alone.
func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// quantileSorted is Quantile on sorted, NaN-free, non-empty data. It copes
// with infinities (a ratio with a zero denominator) by not interpolating
// when it does not need to.
func quantileSorted(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	if frac == 0 || s[lo] == s[lo+1] {
		return s[lo]
	}
	return s[lo] + frac*(s[lo+1]-s[lo])
}

// validLevel reports whether a confidence level is usable.
func validLevel(level float64) bool {
	return level > 0 && level < 1
}
