package analysis

import (
	"testing"

	"github.com/msbench/msbench/internal/stats"
)

func TestWithCIKeepsTheIntervalInRange(t *testing.T) {
	tests := []struct {
		name   string
		xs     []float64
		digits int
		rng    stats.Range
		want   string
	}{
		{"a success percentage: no end above 100", []float64{100, 100, 97}, 2, stats.Percent, "100.00 (94.70–100.00)"},
		{"a latency: no end below 0", []float64{1, 2, 3}, 1, stats.NonNegative, "2.0 (0.0–4.5)"},
		{"a difference keeps its negative end", []float64{1, 2, 3}, 1, stats.Unbounded, "2.0 (-0.5–4.5)"},
		{"inside the range: unchanged", []float64{10, 11, 12}, 1, stats.NonNegative, "11.0 (8.5–13.5)"},
		{"one repetition: no interval", []float64{4}, 1, stats.NonNegative, "4.0"},
		{"nothing measured", nil, 1, stats.NonNegative, "–"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithCI(tt.xs, tt.digits, tt.rng); got != tt.want {
				t.Errorf("WithCI(%v) = %q, want %q", tt.xs, got, tt.want)
			}
		})
	}
}
