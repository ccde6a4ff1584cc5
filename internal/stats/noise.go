package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Spread is the run-to-run standard deviation of a quantity's log across
// deployments: how far one run of a system lands from another run of the
// same system, as a fraction (σ = 0.1 is about ±10%). Lo and Hi are the
// 95% χ² interval of Sigma; DF is the number of A/A pairs it rests on.
type Spread struct {
	Sigma, Lo, Hi float64
	DF            int
}

// spreadLevel is the confidence of Spread's interval.
const spreadLevel = 0.95

// LogSpread estimates the run-to-run spread from A/A pairs: each pair is
// the same quantity (same step, same repetition) from two deployments of
// the same system. With the deployments' logs independent N(μ, σ²),
// d = log(a/b) is N(0, 2σ²), so Σd²/(2σ²) is χ² with n degrees of freedom
// and σ̂² = Σd²/(2n); the interval inverts that χ². The mean of d is taken
// as 0, not estimated: the twins are the same system by design, so every
// pair adds a whole degree of freedom, and a design that is biased (d
// centred away from 0) shows up as a larger σ̂, the safe direction for a
// noise model. All fields NaN (DF 0) with no pairs or any value not
// positive and finite.
func LogSpread(pairs [][2]float64) Spread {
	nan := math.NaN()
	none := Spread{Sigma: nan, Lo: nan, Hi: nan}
	if len(pairs) == 0 {
		return none
	}
	var ss float64
	for _, p := range pairs {
		for _, x := range p {
			if !(x > 0) || math.IsInf(x, 1) {
				return none
			}
		}
		ss += sq(math.Log(p[0] / p[1]))
	}
	n := float64(len(pairs))
	chi := distuv.ChiSquared{K: n}
	alpha := 1 - spreadLevel
	return Spread{
		Sigma: math.Sqrt(ss / (2 * n)),
		Lo:    math.Sqrt(ss / 2 / chi.Quantile(1-alpha/2)),
		Hi:    math.Sqrt(ss / 2 / chi.Quantile(alpha/2)),
		DF:    len(pairs),
	}
}
