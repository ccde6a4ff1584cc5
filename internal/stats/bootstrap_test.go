package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// QuantilesInPlace must agree with the sort-based Quantile for any set of
// quantiles in any order, ties included.
func TestQuantilesInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	qsets := [][]float64{{0.5}, {0.5, 0.9, 0.99}, {0.99, 0.5, 0.9}, {0, 1}, {0.3, 0.3, 0.7}, {0.999, 0.001}}
	for n := 1; n < 80; n++ {
		for rep := range 10 {
			xs := make([]float64, n)
			for i := range xs {
				if rep%2 == 0 {
					xs[i] = float64(r.IntN(4)) // many ties
				} else {
					xs[i] = r.ExpFloat64()
				}
			}
			for _, qs := range qsets {
				got := QuantilesInPlace(slices.Clone(xs), qs...)
				for i, q := range qs {
					if want := Quantile(xs, q); !near(got[i], want, 1e-12) {
						t.Fatalf("QuantilesInPlace(%v, %v)[%d] = %v, want %v", xs, qs, i, got[i], want)
					}
				}
			}
		}
	}
	if got := QuantilesInPlace(nil, 0.5); !math.IsNaN(got[0]) {
		t.Errorf("empty: %v", got)
	}
}

func TestPercentileInterval(t *testing.T) {
	lo, hi := PercentileInterval([]float64{5, 1, 4, 2, 3}, 0.5)
	if lo != 2 || hi != 4 {
		t.Errorf("central half of 1..5 = (%v, %v), want (2, 4)", lo, hi)
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}} {
		if lo, hi := PercentileInterval(bad, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("PercentileInterval(%v) = (%v, %v), want NaN", bad, lo, hi)
		}
	}
}
