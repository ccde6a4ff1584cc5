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
		s := LogSpread(singles(pairs))
		if !math.IsNaN(s.Sigma) || !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) || s.DF != 0 {
			t.Errorf("%s: LogSpread = %+v, want all NaN and DF 0", name, s)
		}
	}
}

func TestLogSpreadExact(t *testing.T) {
	// log(a/b) = ±0.2 in both pairs: σ̂² = (0.04+0.04)/(2·2) = 0.02.
	s := LogSpread(singles([][2]float64{{math.Exp(0.2), 1}, {1, math.Exp(0.2)}}))
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
			if s := LogSpread(singles(pairs)); s.Lo <= tc.sigma && tc.sigma <= s.Hi {
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

func TestDiffAndSampleSpread(t *testing.T) {
	// Differences 0.02 and −0.02: σ̂² = (0.0004+0.0004)/(2·2) = 0.0002.
	if s := DiffSpread(singles([][2]float64{{0.03, 0.01}, {0, 0.02}})); s.DF != 2 || math.Abs(s.Sigma-math.Sqrt(0.0002)) > 1e-12 {
		t.Errorf("DiffSpread = %+v, want Sigma %.6f and DF 2", s, math.Sqrt(0.0002))
	}
	// Error rates are often 0 on both sides: a spread of 0, not NaN.
	if s := DiffSpread(singles([][2]float64{{0, 0}})); s.Sigma != 0 || s.DF != 1 {
		t.Errorf("DiffSpread of zeros = %+v, want 0 with DF 1", s)
	}
	// 1, 2, 3: the sample standard deviation 1 on 2 degrees of freedom.
	if s := SampleSpread([]float64{1, 2, 3}); s.DF != 2 || math.Abs(s.Sigma-1) > 1e-12 || !(s.Lo < 1 && 1 < s.Hi) {
		t.Errorf("SampleSpread = %+v, want Sigma 1 and DF 2", s)
	}
	for name, s := range map[string]Spread{
		"one run":        SampleSpread([]float64{1}),
		"NaN run":        SampleSpread([]float64{1, math.NaN()}),
		"no pairs":       DiffSpread(nil),
		"infinite pair":  DiffSpread(singles([][2]float64{{math.Inf(1), 0}})),
		"NaN difference": DiffSpread(singles([][2]float64{{math.NaN(), 0}})),
	} {
		if !math.IsNaN(s.Sigma) || s.DF != 0 {
			t.Errorf("%s: %+v, want NaN", name, s)
		}
	}
}

func TestSpreadIntervals(t *testing.T) {
	s := Spread{Sigma: 0.1, DF: 4}
	// t(0.975, 4) = 2.776445; one run a side: half-width t·σ·√2 on the log scale.
	half := 2.7764451052 * 0.1 * math.Sqrt2
	if lo, hi := s.RatioCI(1.2, 1, 1, 0.95); !near(lo, 1.2*math.Exp(-half), 1e-8) || !near(hi, 1.2*math.Exp(half), 1e-8) {
		t.Errorf("RatioCI(1.2, 1, 1) = %v–%v, want %v–%v", lo, hi, 1.2*math.Exp(-half), 1.2*math.Exp(half))
	}
	// Three runs against one: √(1/3 + 1).
	if lo, hi := s.DiffCI(0.5, 3, 1, 0.95); !near(hi-0.5, 2.7764451052*0.1*math.Sqrt(4.0/3), 1e-8) || !near(0.5-lo, hi-0.5, 1e-12) {
		t.Errorf("DiffCI(0.5, 3, 1) = %v–%v", lo, hi)
	}
	nan := math.NaN()
	for name, got := range map[string][2]float64{
		"no spread":    pair(noSpread().RatioCI(1, 1, 1, 0.95)),
		"no runs":      pair(s.RatioCI(1, 0, 1, 0.95)),
		"zero ratio":   pair(s.RatioCI(0, 1, 1, 0.95)),
		"inf ratio":    pair(s.RatioCI(math.Inf(1), 1, 1, 0.95)),
		"NaN diff":     pair(s.DiffCI(nan, 1, 1, 0.95)),
		"level 1":      pair(s.DiffCI(0, 1, 1, 1)),
		"no DF spread": pair(Spread{Sigma: 0.1}.DiffCI(0, 1, 1, 0.95)),
	} {
		if !math.IsNaN(got[0]) || !math.IsNaN(got[1]) {
			t.Errorf("%s: %v, want NaN", name, got)
		}
	}
}

func pair(lo, hi float64) [2]float64 { return [2]float64{lo, hi} }

// TestSpreadRatioCICoverage: one run a side, the interval from a spread
// measured on A/A pairs of the same system covers the true ratio about 95%
// of the time, with as few as 2 pairs (the t quantile pays for them).
func TestSpreadRatioCICoverage(t *testing.T) {
	const trials, sigma, truth = 4000, 0.2, 1.3
	for _, npairs := range []int{2, 6, 20} {
		rng := rand.New(rand.NewPCG(11, uint64(npairs)))
		covered := 0
		for range trials {
			pairs := make([][2]float64, npairs)
			for i := range pairs {
				pairs[i] = [2]float64{math.Exp(sigma * rng.NormFloat64()), math.Exp(sigma * rng.NormFloat64())}
			}
			ratio := truth * math.Exp(sigma*rng.NormFloat64()) / math.Exp(sigma*rng.NormFloat64())
			if lo, hi := LogSpread(singles(pairs)).RatioCI(ratio, 1, 1, 0.95); lo <= truth && truth <= hi {
				covered++
			}
		}
		rate := float64(covered) / trials
		t.Logf("one run a side, σ %.2f, spread from %2d A/A pairs: the ratio's interval covers the truth in %.1f%%", sigma, npairs, 100*rate)
		if rate < 0.935 || rate > 0.965 {
			t.Errorf("%d pairs: coverage %.1f%%, want about 95%%", npairs, 100*rate)
		}
	}
}

// TestLogSpreadCoverageOfSharedDeployments draws A/A pairs as a run
// measures them: in each repetition every step is measured on the same two
// deployments, so a deployment's luck (σD) is shared by its steps and only
// the step's own noise (σE) is fresh. The true spread of one deployment's
// step value is √(σD² + σE²). LogSpread's interval, given the repetitions
// as groups, must cover it about 95% of the time whichever dominates; told
// that every pair is a group of its own (independent), it covers it far
// less when the deployment's luck dominates.
func TestLogSpreadCoverageOfSharedDeployments(t *testing.T) {
	const trials = 4000
	for _, tc := range []struct {
		name           string
		sigmaD, sigmaE float64
		reps, steps    int
		ungroupedBelow float64 // coverage with every pair its own group is under this; 0: not checked
	}{
		{"deployments dominate, one repetition", 0.2, 0.02, 1, 8, 0.5},
		{"deployments dominate, three repetitions", 0.2, 0.02, 3, 8, 0.8},
		{"steps dominate", 0.01, 0.1, 3, 6, 0},
		{"both alike", 0.1, 0.1, 2, 9, 0.9},
		{"one step a repetition", 0.1, 0.05, 6, 1, 0},
	} {
		rng := rand.New(rand.NewPCG(11, uint64(tc.reps*100+tc.steps)))
		sigma := math.Hypot(tc.sigmaD, tc.sigmaE)
		grouped, ungrouped := 0, 0
		for range trials {
			groups := make([][][2]float64, tc.reps)
			var all [][2]float64
			for r := range groups {
				first, twin := tc.sigmaD*rng.NormFloat64(), tc.sigmaD*rng.NormFloat64()
				for range tc.steps {
					level := 100 * math.Exp(rng.NormFloat64()) // the step's own level, cancels in the ratio
					p := [2]float64{level * math.Exp(first+tc.sigmaE*rng.NormFloat64()), level * math.Exp(twin+tc.sigmaE*rng.NormFloat64())}
					groups[r] = append(groups[r], p)
					all = append(all, p)
				}
			}
			if s := LogSpread(groups); s.Lo <= sigma && sigma <= s.Hi {
				grouped++
			}
			if s := LogSpread(singles(all)); s.Lo <= sigma && sigma <= s.Hi {
				ungrouped++
			}
		}
		g, u := float64(grouped)/trials, float64(ungrouped)/trials
		t.Logf("%s (σD %.2f, σE %.2f, %d×%d pairs): grouped covers %.1f%%, ungrouped %.1f%%", tc.name, tc.sigmaD, tc.sigmaE, tc.reps, tc.steps, 100*g, 100*u)
		if g < 0.92 || g > 0.98 {
			t.Errorf("%s: grouped coverage %.3f, want about 0.95", tc.name, g)
		}
		if tc.ungroupedBelow > 0 && u >= tc.ungroupedBelow {
			t.Errorf("%s: ungrouped coverage %.3f, want under %.2f (the test's regime does not show the shared luck)", tc.name, u, tc.ungroupedBelow)
		}
	}
}

// A value that is not finite (or not positive, for logs), in any group,
// leaves no spread; empty groups add nothing.
func TestGroupedSpreadsInvalid(t *testing.T) {
	for name, s := range map[string]Spread{
		"log of 0":  LogSpread([][][2]float64{{{1, 1}, {0, 1}}}),
		"diff NaN":  DiffSpread([][][2]float64{{{1, math.NaN()}}}),
		"no pairs":  LogSpread([][][2]float64{{}, nil}),
		"log of −1": LogSpread([][][2]float64{{{-1, 1}}}),
	} {
		if !math.IsNaN(s.Sigma) || s.DF != 0 {
			t.Errorf("%s: %+v, want no spread", name, s)
		}
	}
}

// singles makes each pair a group of its own: independent loads, which
// share no deployment.
func singles(pairs [][2]float64) [][][2]float64 {
	out := make([][][2]float64, len(pairs))
	for i, p := range pairs {
		out[i] = [][2]float64{p}
	}
	return out
}
