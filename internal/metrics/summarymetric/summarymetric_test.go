package summarymetric

import (
	"math"
	"testing"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/stats"
)

// Every figure, as compare has always named, measured and judged it: its
// unit, the way it gets worse, how it is changed, its verdict words, and
// the field of a summary it reads (each field of the summary below holds a
// value of its own, so reading the wrong one shows).
func TestDescriptors(t *testing.T) {
	s := metrics.Summary{Requests: 200, Successes: 150, ThroughputRPS: 321,
		Latency: metrics.Distribution{Mean: 4, P25: 1, P50: 2, P75: 3, P90: 5, P95: 6, P99: 7, P999: 8, Max: 9}}
	tests := []struct {
		name     string
		unit     Unit
		worse    Direction
		change   Change
		verdicts Verdicts
		of       float64
		series   Series
		quantile float64
	}{
		{"p50", Milliseconds, Up, Ratio, Verdicts{Faster, Slower}, 2, Latencies, 0.5},
		{"p90", Milliseconds, Up, Ratio, Verdicts{Faster, Slower}, 5, Latencies, 0.9},
		{"p99", Milliseconds, Up, Ratio, Verdicts{Faster, Slower}, 7, Latencies, 0.99},
		{"mean", Milliseconds, Up, Ratio, Verdicts{Faster, Slower}, 4, Latencies, 0},
		{"throughput", RequestsPerSecond, Down, Ratio, Verdicts{Faster, Slower}, 321, Completions, 0},
		{"errors", Share, Up, Difference, Verdicts{FewerErrors, MoreErrors}, 0.25, Failures, 0},
	}
	if len(All) != len(tests) {
		t.Errorf("%d descriptors, want %d", len(All), len(tests))
	}
	for i, tt := range tests {
		d, ok := Named(tt.name)
		if !ok {
			t.Errorf("%s: not described", tt.name)
			continue
		}
		if i < len(All) && All[i].Name != tt.name {
			t.Errorf("descriptor %d is %s, want %s (the output's order)", i, All[i].Name, tt.name)
		}
		if d.Unit != tt.unit || d.Worse != tt.worse || d.Change != tt.change || d.Verdicts != tt.verdicts || d.Series != tt.series || d.Quantile != tt.quantile {
			t.Errorf("%s: %s, worse %d, %s, %+v, series %d quantile %g; want %s, worse %d, %s, %+v, series %d quantile %g",
				tt.name, d.Unit, d.Worse, d.Change, d.Verdicts, d.Series, d.Quantile, tt.unit, tt.worse, tt.change, tt.verdicts, tt.series, tt.quantile)
		}
		if got := d.Of(s); got != tt.of {
			t.Errorf("%s of the summary = %g, want %g", tt.name, got, tt.of)
		}
	}
	if _, ok := Named("p95"); ok {
		t.Error("p95 is described; compare does not compare it")
	}
	errs, _ := Named("errors")
	if got := errs.Of(metrics.Summary{}); !math.IsNaN(got) {
		t.Errorf("the error share of a load that sent nothing = %g, want NaN", got)
	}
}

// What every descriptor must hold for compare to use it with no other
// edit: a unique name, a reader, a known unit, direction and change, and
// a statistic that exists.
func TestDescriptorsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All {
		if d.Name == "" || seen[d.Name] {
			t.Errorf("name %q empty or repeated", d.Name)
		}
		seen[d.Name] = true
		if d.Of == nil || d.Verdicts.Better == "" || d.Verdicts.Worse == "" {
			t.Errorf("%s: no reader or no verdict words", d.Name)
		}
		if d.Worse != Up && d.Worse != Down || d.Change != Ratio && d.Change != Difference ||
			d.Unit != Milliseconds && d.Unit != RequestsPerSecond && d.Unit != Share {
			t.Errorf("%s: direction %d, change %q, unit %q: want known ones", d.Name, d.Worse, d.Change, d.Unit)
		}
		if !(d.Quantile >= 0 && d.Quantile < 1) || d.Series < Latencies || d.Series > Failures {
			t.Errorf("%s: quantile %g of series %d", d.Name, d.Quantile, d.Series)
		}
		if d.Change == Ratio && d.Range.Lo < 0 {
			t.Errorf("%s: a ratio of a quantity that can be negative (%v) means nothing", d.Name, d.Range)
		}
	}
}

func TestFromSeries(t *testing.T) {
	xs := []float64{4, 1, 3, 2, 5} // unsorted, as a series in send order is
	tests := []struct {
		name string
		want float64
	}{
		{"p50", 3},
		{"p90", 4.6}, // type 7: between the 4th and 5th order statistics
		{"mean", 3},
		{"errors", 3}, // the mean: the failure share of a 0/1 series
	}
	for _, tt := range tests {
		d, _ := Named(tt.name)
		if got := d.FromSeries(xs); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s of %v = %g, want %g", tt.name, xs, got, tt.want)
		}
		if got := d.FromSeries(nil); !math.IsNaN(got) {
			t.Errorf("%s of no data = %g, want NaN", tt.name, got)
		}
	}
}

func TestChange(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		change         Change
		new, base, out float64
	}{
		{Ratio, 3, 2, 1.5},
		{Ratio, 2, 0, inf},
		{Ratio, 0, 0, math.NaN()},
		{Difference, 0.03, 0.01, 0.02},
		{Difference, 0, 0, 0},
	}
	for _, tt := range tests {
		got := tt.change.Of(tt.new, tt.base)
		if !(math.Abs(got-tt.out) < 1e-12 || got == tt.out || math.IsNaN(got) && math.IsNaN(tt.out)) {
			t.Errorf("%s of %g against %g = %g, want %g", tt.change, tt.new, tt.base, got, tt.out)
		}
		if got := tt.change.Of(tt.base, tt.base); tt.base != 0 && got != tt.change.Neutral() {
			t.Errorf("%s of a value against itself = %g, want the neutral %g", tt.change, got, tt.change.Neutral())
		}
	}
	errs, _ := Named("errors")
	p99, _ := Named("p99")
	if got := errs.ChangeRange(); got != (stats.Range{Lo: -1, Hi: 1}) {
		t.Errorf("a difference of shares ranges over %v, want ±1", got)
	}
	if got := p99.ChangeRange(); got != stats.NonNegative {
		t.Errorf("a ratio of latencies ranges over %v, want [0, ∞)", got)
	}
	if Completions.Elements() != "intervals" || Latencies.Elements() != "requests" || Failures.Elements() != "requests" {
		t.Error("a series' elements misnamed")
	}
}
