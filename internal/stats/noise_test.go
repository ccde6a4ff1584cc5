package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLogSpreadInvalid(t *testing.T) {
	for name, pairs := range map[string][][2]float64{
		"none":     nil,
		"zero":     {{1, 1}, {0, 1}},
		"negative": {{1, -1}},
		"NaN":      {{math.NaN(), 1}},
		"infinite": {{math.Inf(1), 1}},
	} {
		s := LogSpread(pairs)
		if !math.IsNaN(s.Sigma) || !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) || s.DF != 0 {
			t.Errorf("%s: LogSpread = %+v, want all NaN and DF 0", name, s)
		}
	}
}

func TestLogSpreadExact(t *testing.T) {
	// log(a/b) = ±0.2 in both pairs: σ̂² = (0.04+0.04)/(2·2) = 0.02.
	s := LogSpread([][2]float64{{math.Exp(0.2), 1}, {1, math.Exp(0.2)}})
	if s.DF != 2 || math.Abs(s.Sigma-math.Sqrt(0.02)) > 1e-12 {
		t.Fatalf("LogSpread = %+v, want Sigma %.6f and DF 2", s, math.Sqrt(0.02))
	}
	if !(s.Lo < s.Sigma && s.Sigma < s.Hi) {
		t.Errorf("interval %.4f–%.4f does not hold Sigma %.4f", s.Lo, s.Hi, s.Sigma)
	}
}

// TestLogSpreadCoverage draws A/A pairs from lognormal deployments of known
// σ and checks that the 95% interval holds σ in about 95% of trials, for
// few pairs (where the χ² interval is wide and skewed) and many.
func TestLogSpreadCoverage(t *testing.T) {
	const trials = 4000
	for _, tc := range []struct {
		sigma float64
		pairs int
	}{{0.03, 1}, {0.03, 3}, {0.2, 2}, {0.2, 10}, {0.5, 30}} {
		rng := rand.New(rand.NewPCG(7, uint64(tc.pairs)))
		covered := 0
		for range trials {
			pairs := make([][2]float64, tc.pairs)
			for i := range pairs {
				level := 100 * math.Exp(rng.NormFloat64()) // the step's own level, cancels in the ratio
				pairs[i] = [2]float64{level * math.Exp(tc.sigma*rng.NormFloat64()), level * math.Exp(tc.sigma*rng.NormFloat64())}
			}
			if s := LogSpread(pairs); s.Lo <= tc.sigma && tc.sigma <= s.Hi {
				covered++
			}
		}
		rate := float64(covered) / trials
		t.Logf("σ %.2f, %2d pairs: interval covers the true σ in %.1f%% of %d trials", tc.sigma, tc.pairs, 100*rate, trials)
		// 4000 trials: the binomial standard error at 95% is 0.34%, so
		// 93.5–96.5 is over 4 standard errors either side.
		if rate < 0.935 || rate > 0.965 {
			t.Errorf("σ %.2f, %d pairs: coverage %.1f%%, want about 95%%", tc.sigma, tc.pairs, 100*rate)
		}
	}
}
