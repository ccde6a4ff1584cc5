package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func normalSample(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 42))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 10 + 2*r.NormFloat64()
	}
	return xs
}

// The interval should cover the true median (10) about level of the time,
// and shrink like 1/√n.
func TestBootstrapMedianCICoverageAndWidth(t *testing.T) {
	const seeds = 40
	covered := 0
	var width25, width400 float64
	for s := range uint64(seeds) {
		lo, hi := BootstrapMedianCI(normalSample(50, s), 0.95, 2000, s)
		if lo <= 10 && 10 <= hi {
			covered++
		}
		lo, hi = BootstrapMedianCI(normalSample(25, s+100), 0.95, 2000, s)
		width25 += hi - lo
		lo, hi = BootstrapMedianCI(normalSample(400, s+200), 0.95, 2000, s)
		width400 += hi - lo
	}
	if covered < 34 {
		t.Errorf("95%% interval covered the true median in %d of %d samples", covered, seeds)
	}
	if ratio := width400 / width25; ratio > 0.4 { // √(25/400) = 0.25
		t.Errorf("width at n=400 is %.2f of the width at n=25, want about 0.25", ratio)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	xs := normalSample(30, 7)
	lo1, hi1 := BootstrapMedianCI(xs, 0.95, 1000, 99)
	lo2, hi2 := BootstrapMedianCI(xs, 0.95, 1000, 99)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed gave (%v, %v) and (%v, %v)", lo1, hi1, lo2, hi2)
	}
	// Medians of a small sample take few distinct values, so one other
	// seed may land on the same ends; several should not all do so.
	same := 0
	for seed := uint64(100); seed < 105; seed++ {
		if lo, hi := BootstrapMedianCI(xs, 0.95, 1000, seed); lo == lo1 && hi == hi1 {
			same++
		}
	}
	if same == 5 {
		t.Error("the seed does not affect the interval")
	}
	r1, a1, b1 := RatioCI(xs, normalSample(30, 8), 0.95, 1000, 5)
	r2, a2, b2 := RatioCI(xs, normalSample(30, 8), 0.95, 1000, 5)
	if r1 != r2 || a1 != a2 || b1 != b2 {
		t.Error("RatioCI is not deterministic for a seed")
	}
}

func TestBootstrapDegenerate(t *testing.T) {
	nan := math.NaN()
	ci := func(xs []float64, level float64) (lo, hi float64) { return BootstrapMedianCI(xs, level, 0, 1) }
	checkIntervals(t, ci, []intervalCase{
		{"empty", nil, 0.95, nan, nan},
		{"NaN", []float64{1, nan, 2}, 0.95, nan, nan},
		{"single", []float64{3}, 0.95, 3, 3},
		{"all equal", []float64{5, 5, 5, 5}, 0.95, 5, 5},
		{"bad level", []float64{1, 2}, 0, nan, nan},
	})
}

func TestRatioCI(t *testing.T) {
	b := normalSample(40, 3)
	a := make([]float64, len(b))
	for i, v := range b {
		a[i] = 2 * v
	}
	ratio, lo, hi := RatioCI(a, b, 0.95, 2000, 1)
	if !near(ratio, 2, 1e-12) || !(lo < 2 && 2 < hi) || !(lo > 1.5 && hi < 2.5) {
		t.Errorf("RatioCI(2b, b) = %v (%v, %v), want 2 inside a tight interval", ratio, lo, hi)
	}
	nan := math.NaN()
	cases := []struct {
		name      string
		a, b      []float64
		r, lo, hi float64
	}{
		{"equal", []float64{4, 4}, []float64{2, 2}, 2, 2, 2},
		{"zero denominator", []float64{1, 2}, []float64{0, 0, 1}, nan, nan, nan},
		{"empty", nil, []float64{1}, nan, nan, nan},
		{"zeros in b", []float64{1, 1, 1}, []float64{0, 1, 1}, 1, 1, math.Inf(1)},
	}
	for _, c := range cases {
		r, lo, hi := RatioCI(c.a, c.b, 0.95, 500, 1)
		if !near(r, c.r, 1e-12) || !near(lo, c.lo, 1e-12) || (hi != c.hi && !near(hi, c.hi, 1e-12)) {
			t.Errorf("%s: got %v (%v, %v), want %v (%v, %v)", c.name, r, lo, hi, c.r, c.lo, c.hi)
		}
	}
}

// medianInPlace must agree with the sort-based Median, ties included.
func TestMedianInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 60; n++ {
		for range 20 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(r.IntN(5)) // many ties
				if n%3 == 0 {
					xs[i] = r.Float64()
				}
			}
			want := Median(xs)
			if got := medianInPlace(slices.Clone(xs)); got != want {
				t.Fatalf("medianInPlace(%v) = %v, want %v", xs, got, want)
			}
		}
	}
}
