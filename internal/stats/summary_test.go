package stats

import (
	"math"
	"slices"
	"testing"
)

func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol
}

func TestSummaries(t *testing.T) {
	nan := math.NaN()
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6} // sorted: 1 1 2 3 4 5 6 9
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"median even", Median(xs), 3.5},
		{"median odd", Median([]float64{5, 1, 3}), 3},
		{"median single", Median([]float64{7}), 7},
		{"median all equal", Median([]float64{2, 2, 2, 2}), 2},
		{"median empty", Median(nil), nan},
		{"median NaN", Median([]float64{1, nan, 3}), nan},
		{"quantile 0", Quantile(xs, 0), 1},
		{"quantile 1", Quantile(xs, 1), 9},
		{"quantile 0.25", Quantile(xs, 0.25), 1.75}, // h = 1.75: 1 + 0.75·(2−1)
		{"quantile 0.9", Quantile(xs, 0.9), 6.9},    // h = 6.3: 6 + 0.3·(9−6), as numpy
		{"quantile q<0", Quantile(xs, -0.1), nan},
		{"quantile q>1", Quantile(xs, 1.1), nan},
		{"quantile q NaN", Quantile(xs, nan), nan},
		{"quantile infinite", Quantile([]float64{1, math.Inf(1), math.Inf(1)}, 0.9), math.Inf(1)},
		{"mean", Mean([]float64{2, 4, 4, 4, 5, 5, 7, 9}), 5},
		{"mean empty", Mean(nil), nan},
		{"stddev", StdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9}), math.Sqrt(32.0 / 7)},
		{"stddev single", StdDev([]float64{3}), nan},
		{"stddev all equal", StdDev([]float64{3, 3, 3}), 0},
		{"stddev large offset", StdDev([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}), 1},
	}
	for _, c := range cases {
		if !near(c.got, c.want, 1e-12) && c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !slices.Equal(xs, []float64{3, 1, 4, 1, 5, 9, 2, 6}) {
		t.Error("input was reordered")
	}
}

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{{2, 4.303}, {9, 2.262}, {29, 2.045}} {
		if got := tQuantile(0.975, c.df); !near(got, c.want, 1e-3) {
			t.Errorf("t(0.975, df=%g) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}

// intervalCase is one expected confidence interval, shared by the tests of
// MeanCI and BootstrapMedianCI.
type intervalCase struct {
	name   string
	xs     []float64
	level  float64
	lo, hi float64
}

func checkIntervals(t *testing.T, ci func(xs []float64, level float64) (lo, hi float64), cases []intervalCase) {
	t.Helper()
	for _, c := range cases {
		lo, hi := ci(c.xs, c.level)
		if !near(lo, c.lo, 1e-5) || !near(hi, c.hi, 1e-5) {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", c.name, lo, hi, c.lo, c.hi)
		}
	}
}

func TestMeanCI(t *testing.T) {
	nan := math.NaN()
	checkIntervals(t, MeanCI, []intervalCase{
		// mean 2, sd 1, half-width t(0.975, 2)/√3 = 4.302653/1.732051
		{"1 2 3", []float64{1, 2, 3}, 0.95, 2 - 2.484138, 2 + 2.484138},
		{"all equal", []float64{4, 4, 4}, 0.95, 4, 4},
		{"single", []float64{4}, 0.95, nan, nan},
		{"empty", nil, 0.95, nan, nan},
		{"NaN", []float64{1, nan}, 0.95, nan, nan},
		{"bad level", []float64{1, 2}, 1, nan, nan},
	})
}
