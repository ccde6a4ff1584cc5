// Package summarymetric describes the figures of one load that msbench
// compare sets side by side, BASE against NEW: p50, p90, p99 and mean
// latency, throughput and the error rate. Each is a Descriptor: its name,
// its unit, which way it moves when a system gets worse, how two of its
// values are set against each other, the values it can take, how to read
// it from a summary.json and how to compute it from a run's records.
//
// # Why a table
//
// A figure is data, not a name to branch on. compare's intervals, its
// verdicts, its --fail-if rules and its text and JSON output read what
// they need from the descriptor, so a new figure is one entry in All and
// is at once compared, gated and printed; a name spelled in a switch
// somewhere is a figure some path forgets. What stays outside is what
// depends on the kind of a figure, not on the figure: compare's
// statistics per Change (a ratio's interval against a difference's) and
// its printing per Unit.
//
// The per-request recipe is a Series and a statistic of it, not a
// function of the records, because the block bootstrap resamples the
// series, not the figure: every quantile of one series must come from
// the same resampled blocks, and a series is built from the records once
// however many figures read it. The package holds no statistics of its
// own beyond reading a series (internal/stats does the rest) and no
// reader of records (internal/records does).
package summarymetric

import (
	"math"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/stats"
)

// Unit is what a figure's values are in, as compare's JSON spells it.
type Unit string

const (
	Milliseconds      Unit = "ms"
	RequestsPerSecond Unit = "req/s"
	// Share is a fraction of requests, 0 to 1, printed as a percentage.
	Share Unit = "share"
)

// Direction is the way a figure moves when a system gets worse.
type Direction int

const (
	Up   Direction = iota + 1 // higher is worse: latency, errors
	Down                      // lower is worse: throughput
)

// Change is how NEW's value of a figure is set against BASE's, as
// compare's JSON spells it.
type Change string

const (
	// Ratio is NEW/BASE, for a quantity that is never negative and
	// rarely 0: a latency, a throughput.
	Ratio Change = "ratio"
	// Difference is NEW − BASE, for a share that is often 0 in BASE (the
	// error rate), whose ratio would say nothing.
	Difference Change = "difference"
)

// Neutral is the change of a figure that did not move: 1 for a ratio, 0
// for a difference.
func (c Change) Neutral() float64 {
	if c == Difference {
		return 0
	}
	return 1
}

// Of sets new against base. A ratio whose base is 0 is +Inf, or NaN when
// new is 0 too.
func (c Change) Of(new, base float64) float64 {
	if c == Difference {
		return new - base
	}
	if base == 0 {
		if new == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return new / base
}

// Series is the per-request data a figure is computed from when a run's
// records are read, each in the order the requests were meant to be sent.
type Series int

const (
	Latencies   Series = iota // each request's latency in ms, from its intended send time
	Completions               // requests completed per second, in consecutive intervals of the run
	Failures                  // 1 for a request that failed, 0 for one that succeeded
)

// Elements names what one element of the series counts: requests, or
// intervals for Completions.
func (s Series) Elements() string {
	if s == Completions {
		return "intervals"
	}
	return "requests"
}

// Verdicts are the words for a change that is surely for the better and
// one surely for the worse.
type Verdicts struct{ Better, Worse string }

// The verdict words, as compare prints them.
const (
	Faster      = "faster"
	Slower      = "slower"
	FewerErrors = "fewer errors"
	MoreErrors  = "more errors"
)

var speed = Verdicts{Better: Faster, Worse: Slower}

// Descriptor is one figure.
type Descriptor struct {
	Name     string // as rules and output spell it: p99, throughput
	Unit     Unit
	Worse    Direction
	Change   Change
	Range    stats.Range // the values the figure can take
	Verdicts Verdicts
	// Of reads the figure from one load's summary; NaN when the summary
	// cannot give it.
	Of func(metrics.Summary) float64
	// Series and Quantile compute it from the records: the series'
	// Quantile, or its mean when Quantile is 0.
	Series   Series
	Quantile float64
}

// The figures, each named for what it is, for code that reads one of
// them from a summary (a report's noise model, a study's analysis).
var (
	P50 = Descriptor{Name: "p50", Unit: Milliseconds, Worse: Up, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.Latency.P50 }, Series: Latencies, Quantile: 0.5}
	P90 = Descriptor{Name: "p90", Unit: Milliseconds, Worse: Up, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.Latency.P90 }, Series: Latencies, Quantile: 0.9}
	// P95 is read by studies; compare keeps to the figures of All.
	P95 = Descriptor{Name: "p95", Unit: Milliseconds, Worse: Up, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.Latency.P95 }, Series: Latencies, Quantile: 0.95}
	P99 = Descriptor{Name: "p99", Unit: Milliseconds, Worse: Up, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.Latency.P99 }, Series: Latencies, Quantile: 0.99}
	Mean = Descriptor{Name: "mean", Unit: Milliseconds, Worse: Up, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.Latency.Mean }, Series: Latencies}
	Throughput = Descriptor{Name: "throughput", Unit: RequestsPerSecond, Worse: Down, Change: Ratio, Range: stats.NonNegative, Verdicts: speed,
		Of: func(s metrics.Summary) float64 { return s.ThroughputRPS }, Series: Completions}
	Errors = Descriptor{Name: "errors", Unit: Share, Worse: Up, Change: Difference, Range: stats.Share, Verdicts: Verdicts{Better: FewerErrors, Worse: MoreErrors},
		Of: errorShare, Series: Failures}
)

// All are the figures compare compares, in output order.
var All = []Descriptor{P50, P90, P99, Mean, Throughput, Errors}

// errorShare is the share of a load's requests that failed; NaN for a
// load that sent none.
func errorShare(s metrics.Summary) float64 {
	if s.Requests == 0 {
		return math.NaN()
	}
	return float64(s.Requests-s.Successes) / float64(s.Requests)
}

// Named finds a figure of All by name.
func Named(name string) (Descriptor, bool) {
	for _, d := range All {
		if d.Name == name {
			return d, true
		}
	}
	return Descriptor{}, false
}

// FromSeries computes the figure from its series (NaN when empty).
func (d Descriptor) FromSeries(xs []float64) float64 {
	if d.Quantile > 0 {
		return stats.Quantile(xs, d.Quantile)
	}
	return stats.Mean(xs)
}

// ChangeRange is the values a change of the figure can take: a ratio of
// quantities never negative is never negative, and a difference spans the
// width of Range either way (±1 for a share).
func (d Descriptor) ChangeRange() stats.Range {
	if d.Change == Difference {
		w := d.Range.Hi - d.Range.Lo
		return stats.Range{Lo: -w, Hi: w}
	}
	return stats.NonNegative
}
