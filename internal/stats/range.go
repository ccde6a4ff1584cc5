package stats

import "math"

// Range is the set of values a quantity can take, Lo to Hi inclusive; an
// open end is ±Inf. A t-interval knows nothing of it: with few, skewed
// runs it reaches below 0 for a latency or above 100 for a percentage,
// which a report must not show nor a verdict rest on.
type Range struct{ Lo, Hi float64 }

// The ranges of the quantities msbench reports. Unbounded is for
// differences, which take either sign.
var (
	Unbounded   = Range{math.Inf(-1), math.Inf(1)}
	NonNegative = Range{0, math.Inf(1)}
	Share       = Range{0, 1}
	Percent     = Range{0, 100}
)

// Clamp moves x into the range. NaN stays NaN (min and max keep it), so
// a missing interval still reads as missing.
func (r Range) Clamp(x float64) float64 { return min(max(x, r.Lo), r.Hi) }

// MeanCIIn is MeanCI with both ends clamped into rng: what is left of the
// interval once the values the quantity cannot take are cut off. The
// median or mean shown beside it needs no clamping: of values in rng, it
// lies in rng.
func MeanCIIn(xs []float64, level float64, rng Range) (lo, hi float64) {
	lo, hi = MeanCI(xs, level)
	return rng.Clamp(lo), rng.Clamp(hi)
}
