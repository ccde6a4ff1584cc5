package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGeoMeanCIKnownValues(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name       string
		xs         []float64
		gm, lo, hi float64
	}{
		// logs 0 and ln 4: mean ln 2, sd ln4/√2; half-width t(0.975, 1)·sd/√2.
		{"1 and 4", []float64{1, 4}, 2, 0.000299282442, 13365.30125696},
		{"all equal", []float64{1.5, 1.5, 1.5}, 1.5, 1.5, 1.5},
		{"single", []float64{3}, 3, nan, nan},
		{"empty", nil, nan, nan, nan},
		{"zero", []float64{1, 0}, nan, nan, nan},
		{"negative", []float64{1, -2}, nan, nan, nan},
		{"NaN", []float64{1, nan}, nan, nan, nan},
		{"infinite", []float64{1, math.Inf(1)}, nan, nan, nan},
	}
	for _, c := range cases {
		gm, lo, hi := GeoMeanCI(c.xs, 0.95)
		if !near(gm, c.gm, 1e-9) || !near(lo, c.lo, 1e-6*math.Max(1, c.lo)) || !near(hi, c.hi, 1e-6*math.Max(1, c.hi)) {
			t.Errorf("%s: got %v (%v, %v), want %v (%v, %v)", c.name, gm, lo, hi, c.gm, c.lo, c.hi)
		}
	}
	if _, lo, _ := GeoMeanCI([]float64{1, 2}, 0); !math.IsNaN(lo) {
		t.Error("level 0 accepted")
	}
}

// Per-run ratios around a true 2× with 5% noise: the interval contains 2,
// is tight, and covers 2 about 95% of the time.
func TestGeoMeanCIAroundTwo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const trials = 400
	covered := 0
	for trial := range trials {
		ratios := make([]float64, 8)
		for i := range ratios {
			ratios[i] = 2 * math.Exp(0.05*r.NormFloat64())
		}
		gm, lo, hi := GeoMeanCI(ratios, 0.95)
		if lo <= 2 && 2 <= hi {
			covered++
		}
		if trial == 0 {
			t.Logf("first trial: %.3f× (95%% CI %.3f–%.3f)", gm, lo, hi)
			if !(lo < 2 && 2 < hi) || lo < 1.85 || hi > 2.15 || !(lo < gm && gm < hi) {
				t.Errorf("ratios around 2×: %v (%v, %v), want a tight interval containing 2", gm, lo, hi)
			}
		}
	}
	t.Logf("ratios 2×·exp(N(0, 0.05²)), 8 a trial: the 95%% interval covered 2 in %.1f%% of %d trials", 100*float64(covered)/trials, trials)
	if c := float64(covered) / trials; c < 0.92 || c > 0.98 {
		t.Errorf("the 95%% interval covered 2 in %.1f%% of %d trials", 100*c, trials)
	}
}

func TestRunRatioKnownValues(t *testing.T) {
	// Means 10 and 20, variances 1 and 4, three runs each: Welch df 4 at
	// ρ = 2, t(0.975, 4) = 2.776445; the Fieller quadratic
	// (100 − t²/3)ρ² − 400ρ + (400 − 4t²/3) = 0 has roots 1.590396, 2.515096.
	ratio, lo, hi, n := RunRatio([]float64{9, 10, 11}, []float64{18, 20, 22}, 0.95)
	if ratio != 2 || !near(lo, 1.5903963746, 1e-8) || !near(hi, 2.5150962765, 1e-8) || n != 3 {
		t.Errorf("RunRatio = %v (%v, %v) n=%d, want 2 (1.590396, 2.515096) n=3", ratio, lo, hi, n)
	}
	nan := math.NaN()
	inf := math.Inf(1)
	cases := []struct {
		name          string
		base, new     []float64
		ratio, lo, hi float64
		n             int
	}{
		{"no spread", []float64{4, 4}, []float64{5, 5, 5}, 1.25, 1.25, 1.25, 2},
		{"one run", []float64{4}, []float64{5, 6}, 1.375, nan, nan, 1},
		{"empty", nil, []float64{5, 6}, nan, nan, nan, 0},
		{"zero base", []float64{0, 0}, []float64{5, 6}, nan, nan, nan, 2},
		{"NaN", []float64{1, nan}, []float64{5, 6}, nan, nan, nan, 2},
		// A base mean not distinguishable from 0: the set is unbounded.
		{"unbounded", []float64{0.1, 10}, []float64{5, 6}, 5.5 / 5.05, math.Inf(-1), inf, 2},
	}
	for _, c := range cases {
		ratio, lo, hi, n := RunRatio(c.base, c.new, 0.95)
		if !near(ratio, c.ratio, 1e-12) || (lo != c.lo && !near(lo, c.lo, 1e-12)) || (hi != c.hi && !near(hi, c.hi, 1e-12)) || n != c.n {
			t.Errorf("%s: got %v (%v, %v) n=%d, want %v (%v, %v) n=%d", c.name, ratio, lo, hi, n, c.ratio, c.lo, c.hi, c.n)
		}
	}
}

// system draws the per-run values (say each run's mean latency) of runs
// of one system: each run is shifted by a run-to-run offset of sd
// runSD (another deployment, another moment of the machine), and its own
// value carries a little within-run noise.
func system(r *rand.Rand, runs int, truth, runSD float64) []float64 {
	xs := make([]float64, runs)
	for i := range xs {
		xs[i] = truth * math.Exp(runSD*r.NormFloat64()) * (1 + 0.005*r.NormFloat64())
	}
	return xs
}

// The A/A test: two identical systems, five runs each, runs differing by
// 3%. RunRatio must call them the same (interval containing 1) in at least
// 90% of trials. Comparing pooled requests instead, as if every request
// were independent, calls them different most of the time, because a run's
// thousands of requests all share its offset: the logged figure shows it.
func TestRunRatioAA(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const trials = 1000
	same, pooledSame := 0, 0
	for range trials {
		base, new := system(r, 5, 10, 0.03), system(r, 5, 10, 0.03)
		_, lo, hi, _ := RunRatio(base, new, 0.95)
		if lo <= 1 && 1 <= hi {
			same++
		}
		// The request-level view: 5 runs × 2000 requests of sd 20% around
		// each run's value, analysed as 10,000 independent requests.
		if lo, hi := pooledRatioCI(r, base, new, 2000, 0.2); lo <= 1 && 1 <= hi {
			pooledSame++
		}
	}
	t.Logf("A/A, 5 runs a side, 3%% run-to-run offset: RunRatio says same in %.1f%% of %d trials; "+
		"treating pooled requests as independent says same in %.1f%%",
		100*float64(same)/trials, trials, 100*float64(pooledSame)/trials)
	if c := float64(same) / trials; c < 0.90 {
		t.Errorf("identical systems called the same in only %.1f%% of trials, want ≥ 90%%", 100*c)
	}
}

// pooledRatioCI is the naive request-level interval for the ratio of mean
// latencies (delta method, requests taken as independent), for contrast
// only: nothing in msbench computes it.
func pooledRatioCI(r *rand.Rand, base, new []float64, perRun int, sd float64) (lo, hi float64) {
	pool := func(runs []float64) (m, v float64) {
		var xs []float64
		for _, run := range runs {
			for range perRun {
				xs = append(xs, run*(1+sd*r.NormFloat64()))
			}
		}
		return Mean(xs), sq(StdDev(xs)) / float64(len(xs))
	}
	mb, vb := pool(base)
	mn, vn := pool(new)
	ratio := mn / mb
	se := ratio * math.Sqrt(vn/(mn*mn)+vb/(mb*mb))
	return ratio - 1.96*se, ratio + 1.96*se
}

// A real 10% regression with the same 3% run-to-run noise: with five runs
// a side the interval contains the truth about 95% of the time and
// excludes 1 most of the time.
func TestRunRatioDetectsRegression(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const trials = 500
	covered, detected := 0, 0
	for range trials {
		_, lo, hi, _ := RunRatio(system(r, 5, 10, 0.03), system(r, 5, 11, 0.03), 0.95)
		if lo <= 1.1 && 1.1 <= hi {
			covered++
		}
		if lo > 1 {
			detected++
		}
	}
	t.Logf("10%% regression, 5 runs a side: covered in %.1f%%, detected in %.1f%% of %d trials",
		100*float64(covered)/trials, 100*float64(detected)/trials, trials)
	if c := float64(covered) / trials; c < 0.90 || c > 0.99 {
		t.Errorf("covered the true ratio in %.1f%% of trials, want about 95%%", 100*c)
	}
	if d := float64(detected) / trials; d < 0.9 {
		t.Errorf("detected the regression in only %.1f%% of trials", 100*d)
	}
}

func TestPairedRunRatio(t *testing.T) {
	// Repetitions drift together (machine noise common to both variants):
	// pairing removes it, leaving a tight interval around the true 1.2×.
	base := []float64{10, 12, 9, 11, 10.5}
	new := make([]float64, len(base))
	for i, b := range base {
		new[i] = 1.2 * b * (1 + 0.01*float64(i%2*2-1))
	}
	ratio, lo, hi, n := PairedRunRatio(base, new, 0.95)
	if n != 5 || !(lo < 1.2 && 1.2 < hi) || hi-lo > 0.05 || !(lo < ratio && ratio < hi) {
		t.Errorf("paired: %v (%v, %v) n=%d, want a tight interval around 1.2", ratio, lo, hi, n)
	}
	if _, ulo, uhi, _ := RunRatio(base, new, 0.95); uhi-ulo < 4*(hi-lo) {
		t.Errorf("unpaired interval (%v, %v) should be much wider than the paired (%v, %v) under common drift", ulo, uhi, lo, hi)
	}
	if r, _, _, n := PairedRunRatio([]float64{1, 2}, []float64{1}, 0.95); !math.IsNaN(r) || n != 0 {
		t.Error("unequal lengths accepted")
	}
}

func TestPairedRunDiff(t *testing.T) {
	// Error rates that drift together: the differences 0.01, 0.02, 0.03
	// have mean 0.02 and sd 0.01, so the interval is 0.02 ± t(2)·0.01/√3.
	diff, lo, hi, n := PairedRunDiff([]float64{0, 0.10, 0.30}, []float64{0.01, 0.12, 0.33}, 0.95)
	half := 4.302652730 * 0.01 / math.Sqrt(3)
	if !near(diff, 0.02, 1e-12) || !near(lo, 0.02-half, 1e-9) || !near(hi, 0.02+half, 1e-9) || n != 3 {
		t.Errorf("PairedRunDiff = %v (%v, %v) n=%d, want 0.02 ± %v", diff, lo, hi, n, half)
	}
	// Unpaired, the drift of 0.3 between repetitions swamps the change.
	if _, ulo, _, _ := RunDiff([]float64{0, 0.10, 0.30}, []float64{0.01, 0.12, 0.33}, 0.95); ulo > 0 {
		t.Errorf("unpaired lower end %v excludes 0: the test would not show what pairing adds", ulo)
	}
	for _, c := range []struct {
		name      string
		base, new []float64
	}{
		{"unequal lengths", []float64{0, 1}, []float64{0}},
		{"none", nil, nil},
		{"NaN", []float64{0, math.NaN()}, []float64{0, 0}},
	} {
		if d, _, _, _ := PairedRunDiff(c.base, c.new, 0.95); !math.IsNaN(d) {
			t.Errorf("%s: %v, want NaN", c.name, d)
		}
	}
	if d, lo, hi, n := PairedRunDiff([]float64{0.1}, []float64{0.3}, 0.95); !near(d, 0.2, 1e-12) || !math.IsNaN(lo) || !math.IsNaN(hi) || n != 1 {
		t.Errorf("one pair: %v (%v, %v) n=%d, want 0.2 and no interval", d, lo, hi, n)
	}
}

func TestRunDiff(t *testing.T) {
	// Means 0.01 and 0.03, sd 0.01 each, 3 runs: se = 0.01·√(2/3), df = 4.
	diff, lo, hi, n := RunDiff([]float64{0, 0.01, 0.02}, []float64{0.02, 0.03, 0.04}, 0.95)
	half := 2.7764451052 * 0.01 * math.Sqrt(2.0/3)
	if !near(diff, 0.02, 1e-12) || !near(lo, 0.02-half, 1e-9) || !near(hi, 0.02+half, 1e-9) || n != 3 {
		t.Errorf("RunDiff = %v (%v, %v) n=%d, want 0.02 ± %v", diff, lo, hi, n, half)
	}
	if d, lo, hi, _ := RunDiff([]float64{0, 0}, []float64{0, 0, 0}, 0.95); d != 0 || lo != 0 || hi != 0 {
		t.Errorf("no errors on either side: %v (%v, %v)", d, lo, hi)
	}
	if _, lo, _, _ := RunDiff([]float64{0}, []float64{0, 1}, 0.95); !math.IsNaN(lo) {
		t.Error("one run gave an interval")
	}
}

// Fieller's lower end reaches below 0 when NEW is spread wide: a ratio of
// positive latencies cannot, so RunRatioIn cuts it at 0; an unbounded
// interval stays unbounded above.
func TestRunRatioInClamps(t *testing.T) {
	_, lo, hi, _ := RunRatio([]float64{100, 101, 102}, []float64{1, 50}, 0.95)
	if !(lo < 0) {
		t.Fatalf("RunRatio's lower end %v: the case no longer shows a negative end", lo)
	}
	ratio, lo2, hi2, _ := RunRatioIn([]float64{100, 101, 102}, []float64{1, 50}, 0.95, NonNegative)
	if lo2 != 0 || hi2 != hi || !near(ratio, 25.5/101, 1e-12) {
		t.Errorf("RunRatioIn = %v (%v, %v), want the lower end at 0 and the upper %v", ratio, lo2, hi2, hi)
	}
	if _, lo, hi, _ := RunRatioIn([]float64{0.1, 10}, []float64{5, 6}, 0.95, NonNegative); lo != 0 || !math.IsInf(hi, 1) {
		t.Errorf("unbounded: %v–%v, want 0–+Inf", lo, hi)
	}
}
