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
		{"a success percentage: no end above 100", []float64{100, 100, 97}, 2, stats.Percent, "99.00 (94.70–100.00)"},
		{"a latency: no end below 0", []float64{1, 2, 3}, 1, stats.NonNegative, "2.0 (0.0–4.5)"},
		{"a difference keeps its negative end", []float64{1, 2, 3}, 1, stats.Unbounded, "2.0 (-0.5–4.5)"},
		{"inside the range: unchanged", []float64{10, 11, 12}, 1, stats.NonNegative, "11.0 (8.5–13.5)"},
		// The median was shown with the mean's interval, "10.0 (3.0–8.7)",
		// which does not hold it (issue 20, item 7).
		{"13 repetitions: the median with its own interval", []float64{1, 1, 1, 1, 1, 1, 10, 10, 10, 10, 10, 10, 10}, 1, stats.NonNegative, "10.0 (1.0–10.0)"},
		{"three repetitions: the mean with its own interval", []float64{1, 1, 4}, 1, stats.NonNegative, "2.0 (0.0–6.3)"},
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
