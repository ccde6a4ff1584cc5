package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Spread is the run-to-run standard deviation of a quantity's log across
// deployments: how far one run of a system lands from another run of the
// same system, as a fraction (σ = 0.1 is about ±10%). Lo and Hi are the
// 95% χ² interval of Sigma; DF is the degrees of freedom it rests on.
// DiffSpread and SampleSpread fill it for a quantity's values instead of
// its logs, and for a sample of runs (DF = runs − 1).
type Spread struct {
	Sigma, Lo, Hi float64
	DF            int
}

// spreadLevel is the confidence of Spread's interval.
const spreadLevel = 0.95

// LogSpread estimates the run-to-run spread from A/A pairs: each pair is
// the same quantity (same step, same repetition) from two deployments of
// the same system, and pairs come in groups that share their two
// deployments (the steps of one repetition; a pair of independent loads is
// a group of its own). With the deployments' logs N(μ, σ²), d = log(a/b)
// is N(0, 2σ²) and σ̂² = Σd²/(2n) over n pairs. The mean of d is taken as
// 0, not estimated: the twins are the same system by design, and a design
// that is biased (d centred away from 0) shows up as a larger σ̂, the safe
// direction for a noise model.
//
// Within a group a deployment's luck is in every pair, so the pairs are
// not independent. With d = δ + ε (δ the group's deployment difference,
// variance a, shared; ε the step's own, variance b), Σd² is χ²-like with
// Satterthwaite's effective degrees of freedom
// ν = (Σ S(a+b))² / Σ (a²S² + 2abS + b²S) over groups of S pairs: n when
// deployments add nothing (a = 0), about the number of groups when steps
// add nothing (b = 0), and n for groups of one pair, whose χ² is then
// exact. b is estimated within groups, a from the groups' means; DF is ν
// rounded down (at least 1), the conservative side for t. All NaN (DF 0)
// with no pairs or any value not positive and finite.
func LogSpread(groups [][][2]float64) Spread {
	return groupedSpread(groups, func(p [2]float64) (float64, bool) {
		ok := p[0] > 0 && p[1] > 0 && !math.IsInf(p[0], 1) && !math.IsInf(p[1], 1)
		return math.Log(p[0] / p[1]), ok
	})
}

// DiffSpread is LogSpread for a quantity compared by difference rather
// than ratio (an error rate, often 0): the spread of the values
// themselves, from d = a − b. All NaN with no pairs or any value not
// finite.
func DiffSpread(groups [][][2]float64) Spread {
	return groupedSpread(groups, func(p [2]float64) (float64, bool) {
		return p[0] - p[1], finite(p[:])
	})
}

// groupedSpread is the spread of the pairs' differences d (by diff),
// grouped as LogSpread says.
func groupedSpread(groups [][][2]float64, diff func([2]float64) (float64, bool)) Spread {
	var ds [][]float64
	n, ss := 0, 0.0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		d := make([]float64, len(g))
		for i, p := range g {
			v, ok := diff(p)
			if !ok {
				return noSpread()
			}
			d[i] = v
			ss += sq(v)
		}
		ds = append(ds, d)
		n += len(d)
	}
	if n == 0 {
		return noSpread()
	}
	var within float64
	withinDF := 0
	for _, g := range ds {
		m := Mean(g)
		for _, d := range g {
			within += sq(d - m)
		}
		withinDF += len(g) - 1
	}
	b := 0.0
	if withinDF > 0 {
		b = within / float64(withinDF)
	}
	// a from the groups' means, each δ + mean ε of variance a + b/S, at
	// its upper 80% bound: an a that came out small by chance would count
	// the pairs as independent and narrow the interval just where the luck
	// of a few deployments is least known. 80% is the calibration test's
	// (TestLogSpreadCoverageOfSharedDeployments): the central estimate covered 89% with
	// one repetition, the 97.5% bound 98–99% where steps dominate; this
	// one covers 93.5–97.6% across the regimes tested.
	var means, inv float64
	for _, g := range ds {
		means += sq(Mean(g))
		inv += 1 / float64(len(g))
	}
	groupsChi := distuv.ChiSquared{K: float64(len(ds))}
	a := max(0, means/groupsChi.Quantile(0.2)-b*inv/float64(len(ds)))
	var num, den float64
	for _, g := range ds {
		size := float64(len(g))
		num += size * (a + b)
		den += a*a*size*size + 2*a*b*size + b*b*size
	}
	nu := float64(n)
	if den > 0 {
		nu = num * num / den
	}
	return chiSpread(ss/2/float64(n), nu)
}

// SampleSpread is the spread of independent runs of one system: their
// standard deviation, with n − 1 degrees of freedom (the mean is
// estimated). Pass logs for a quantity compared by ratio. All NaN for
// fewer than two values or any not finite.
func SampleSpread(xs []float64) Spread {
	if len(xs) < 2 || !finite(xs) {
		return noSpread()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += sq(x - m)
	}
	df := float64(len(xs) - 1)
	return chiSpread(ss/df, df)
}

// chiSpread is σ̂ = √sigma2 with the interval from ν·σ̂²/σ² ~ χ²(ν).
func chiSpread(sigma2, nu float64) Spread {
	chi := distuv.ChiSquared{K: nu}
	alpha := 1 - spreadLevel
	return Spread{
		Sigma: math.Sqrt(sigma2),
		Lo:    math.Sqrt(sigma2 * nu / chi.Quantile(1-alpha/2)),
		Hi:    math.Sqrt(sigma2 * nu / chi.Quantile(alpha/2)),
		DF:    max(1, int(nu)),
	}
}

func noSpread() Spread {
	nan := math.NaN()
	return Spread{Sigma: nan, Lo: nan, Hi: nan}
}

// DiffCI is the interval at the given level of a difference of means,
// mean(new) − mean(base) = diff, over nBase and nNew runs that each vary
// by the spread: diff ± t(DF)·σ·√(1/nBase + 1/nNew). The t quantile has
// the spread's degrees of freedom because σ is itself estimated, from the
// A/A pairs or the runs it came from; with one run a side the half-width
// is t·σ·√2. NaN without a spread, a run on either side or a valid level.
func (s Spread) DiffCI(diff float64, nBase, nNew int, level float64) (lo, hi float64) {
	nan := math.NaN()
	if s.DF < 1 || math.IsNaN(s.Sigma) || nBase < 1 || nNew < 1 || !validLevel(level) || math.IsNaN(diff) || math.IsInf(diff, 0) {
		return nan, nan
	}
	half := tQuantile(1-(1-level)/2, float64(s.DF)) * s.Sigma * math.Sqrt(1/float64(nBase)+1/float64(nNew))
	return diff - half, diff + half
}

// RatioCI is DiffCI on the log scale, for a spread of logs: ratio ×
// exp(±t(DF)·σ·√(1/nBase + 1/nNew)), positive as a ratio of positive
// quantities is. NaN also for a ratio not positive and finite.
func (s Spread) RatioCI(ratio float64, nBase, nNew int, level float64) (lo, hi float64) {
	if !(ratio > 0) {
		return math.NaN(), math.NaN()
	}
	lo, hi = s.DiffCI(math.Log(ratio), nBase, nNew, level)
	return math.Exp(lo), math.Exp(hi)
}
