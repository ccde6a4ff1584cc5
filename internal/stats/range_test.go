package stats

import (
	"math"
	"testing"
)

func TestMeanCIIn(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		xs     []float64
		rng    Range
		lo, hi float64
	}{
		// mean 99, sd √3, half-width t(0.975, 2) = 4.302653: raw (94.70, 103.30)
		{"a success percentage crossing 100", []float64{100, 100, 97}, Percent, 99 - 4.302653, 100},
		// raw (−0.484138, 4.484138), as in TestMeanCI
		{"a latency crossing 0", []float64{1, 2, 3}, NonNegative, 0, 2 + 2.484138},
		// mean 0.5, sd 0.57735, half-width t(0.975, 3) × 0.57735 / 2 = 0.918693
		{"a share crossing both ends", []float64{0, 1, 0, 1}, Share, 0, 1},
		{"inside the range: unchanged", []float64{10, 11, 12}, NonNegative, 11 - 2.484138, 11 + 2.484138},
		{"unbounded: unchanged", []float64{1, 2, 3}, Unbounded, 2 - 2.484138, 2 + 2.484138},
		{"all at an end", []float64{0, 0, 0}, Share, 0, 0},
		{"single", []float64{0.5}, Share, nan, nan},
		{"empty", nil, NonNegative, nan, nan},
		{"NaN", []float64{1, nan}, NonNegative, nan, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := MeanCIIn(tt.xs, 0.95, tt.rng)
			if !near(lo, tt.lo, 1e-5) || !near(hi, tt.hi, 1e-5) {
				t.Errorf("got (%v, %v), want (%v, %v)", lo, hi, tt.lo, tt.hi)
			}
		})
	}
}
