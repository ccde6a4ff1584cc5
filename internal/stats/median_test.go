package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMedianCI(t *testing.T) {
	tests := []struct {
		name        string
		xs          []float64
		med, lo, hi float64
	}{
		// The mean's interval of these is 3.0–8.7, without the median.
		{"the median lies in its own interval", []float64{1, 1, 1, 1, 1, 1, 10, 10, 10, 10, 10, 10, 10}, 10, 1, 10},
		{"six values: the whole range (96.9%)", []float64{6, 1, 5, 2, 4, 3}, 3.5, 1, 6},
		{"five values: no 95% interval (93.75% at most)", []float64{1, 2, 3, 4, 5}, 3, math.NaN(), math.NaN()},
		{"none", nil, math.NaN(), math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			med, lo, hi := MedianCI(tt.xs, 0.95)
			if !same(med, tt.med) || !same(lo, tt.lo) || !same(hi, tt.hi) {
				t.Fatalf("MedianCI = %v (%v–%v), want %v (%v–%v)", med, lo, hi, tt.med, tt.lo, tt.hi)
			}
		})
	}
}

// The interval covers the true median at least at its level, for a
// skewed distribution as for any.
func TestMedianCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, n := range []int{6, 13, 40} {
		covered, trials := 0, 4000
		for range trials {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.Exp(r.NormFloat64()) // median 1
			}
			if _, lo, hi := MedianCI(xs, 0.95); lo <= 1 && 1 <= hi {
				covered++
			}
		}
		if c := float64(covered) / float64(trials); c < 0.94 {
			t.Errorf("n=%d: coverage %.3f, want at least 0.95", n, c)
		}
	}
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
