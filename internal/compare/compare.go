package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/stats"
)

// Metrics are what is compared, in output order: latency percentiles and
// mean (ms, from each request's intended send time), throughput
// (requests completed per second) and the error rate (share of requests
// that failed).
var Metrics = []string{"p50", "p90", "p99", "mean", "throughput", "errors"}

// Verdicts. Latency is faster when the whole interval of NEW/BASE lies
// below 1 and slower when it lies above; throughput the other way round;
// errors compare by difference, more or fewer when the whole interval lies
// on one side of 0. Anything else is the same within noise.
const (
	VerdictFaster      = "faster"
	VerdictSlower      = "slower"
	VerdictSame        = "same (within noise)"
	VerdictMoreErrors  = "more errors"
	VerdictFewerErrors = "fewer errors"
	VerdictUnknown     = "unknown (no interval)"
)

// Methods of Comparison.
const (
	// MethodRuns: at least two runs a side; each run gives one value per
	// metric (from its summary.json), and the interval comes from how the
	// runs spread: stats.RunRatio (ratio of means, Fieller–Welch) and, for
	// errors, stats.RunDiff (difference of means, Welch).
	MethodRuns = "runs"
	// MethodBlock: a single run on either side; the interval comes from a
	// circular-block bootstrap over time within each side's records
	// (latencies and failures in send order, completions per interval),
	// BASE and NEW resampled independently and the ratio (or difference)
	// of their statistics taken resample by resample. It shows how much
	// the numbers would move if the runs went on, not how much a new
	// deployment would move them.
	MethodBlock = "block-bootstrap"
)

// Options tune Compare; the zero value is usable.
type Options struct {
	Level     float64 // confidence level; 0 means 0.95
	Resamples int     // block bootstrap resamples; 0 means DefaultResamples
	Seed      uint64  // block bootstrap seed: the same seed gives the same intervals
	Workers   int     // cells bootstrapped at once; 0 means GOMAXPROCS
}

// DefaultResamples is the block bootstrap's default: enough for the
// 2.5% and 97.5% percentiles of the ratio to move by well under the
// interval's width, few enough that a side of a million requests takes
// seconds.
const DefaultResamples = 1000

// Num is a number that encodes as JSON null when it is NaN or infinite
// (no value, or an unbounded interval).
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null back as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Report is the whole comparison; its JSON field names are stable.
type Report struct {
	Base        Side         `json:"base"`
	New         Side         `json:"new"`
	Level       float64      `json:"level"`
	Comparisons []Comparison `json:"comparisons"`
	FailIf      []RuleResult `json:"fail_if"`
	// Failed is true when some --fail-if rule was breached.
	Failed bool `json:"failed"`
}

// Side describes BASE or NEW.
type Side struct {
	Dir   string   `json:"dir"`
	Kind  string   `json:"kind"` // run or load
	Notes []string `json:"notes,omitempty"`
}

// Comparison is one step of one variant measured on both sides.
type Comparison struct {
	Step    string `json:"step"`
	Variant string `json:"variant"`
	// NewStep and NewVariant name NEW's cell: the same as Step and Variant
	// except when a load directory is compared with a run's single cell.
	NewStep      string         `json:"new_step"`
	NewVariant   string         `json:"new_variant"`
	Method       string         `json:"method"`
	MethodDetail string         `json:"method_detail"`
	BaseRuns     int            `json:"base_runs"`
	NewRuns      int            `json:"new_runs"`
	BaseRequests int64          `json:"base_requests"`
	NewRequests  int64          `json:"new_requests"`
	Metrics      []MetricResult `json:"metrics"`
	Warnings     []string       `json:"warnings,omitempty"`
}

// Label names the comparison in output.
func (c *Comparison) Label() string {
	l := (&Cell{Step: c.Step, Variant: c.Variant}).Label()
	if c.NewStep != c.Step || c.NewVariant != c.Variant {
		l += " vs " + (&Cell{Step: c.NewStep, Variant: c.NewVariant}).Label()
	}
	return l
}

// Metric returns the result for one metric, nil if absent.
func (c *Comparison) Metric(name string) *MetricResult {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == name {
			return &c.Metrics[i]
		}
	}
	return nil
}

// MetricResult is one metric of a comparison.
type MetricResult struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"` // ms, req/s, or share (errors)
	Base   Num    `json:"base"`
	New    Num    `json:"new"`
	// Change is "ratio" (Estimate = NEW/BASE) or "difference" (Estimate =
	// NEW − BASE, for errors, whose BASE is often 0).
	Change   string `json:"change"`
	Estimate Num    `json:"estimate"`
	Lo       Num    `json:"ci_lo"`
	Hi       Num    `json:"ci_hi"`
	BaseN    int64  `json:"base_n"`
	NewN     int64  `json:"new_n"`
	NUnit    string `json:"n_unit"` // runs, requests, or intervals (throughput's per-interval counts)
	Verdict  string `json:"verdict"`
}

// Compare compares every step and variant present in both sources.
// Nothing in common is a UsageError.
func Compare(base, new *Source, opt Options) (*Report, error) {
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	if !(opt.Level > 0 && opt.Level < 1) {
		return nil, usagef("confidence level %g: want a value between 0 and 1", opt.Level)
	}
	if opt.Resamples <= 0 {
		opt.Resamples = DefaultResamples
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	pairs, err := match(base, new)
	if err != nil {
		return nil, err
	}
	r := &Report{
		Base:        Side{Dir: base.Dir, Kind: base.Kind, Notes: base.Notes},
		New:         Side{Dir: new.Dir, Kind: new.Kind, Notes: new.Notes},
		Level:       opt.Level,
		Comparisons: make([]Comparison, len(pairs)),
		FailIf:      []RuleResult{},
	}
	errs := make([]error, len(pairs))
	sem := make(chan struct{}, opt.Workers)
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.Comparisons[i], errs[i] = comparePair(p, i, opt)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func comparePair(p pair, index int, opt Options) (Comparison, error) {
	c := Comparison{
		Step: p.base.Step, Variant: p.base.Variant, NewStep: p.new.Step, NewVariant: p.new.Variant,
		BaseRuns: len(p.base.Units), NewRuns: len(p.new.Units),
	}
	for _, u := range p.base.Units {
		c.BaseRequests += u.Summary.Requests
	}
	for _, u := range p.new.Units {
		c.NewRequests += u.Summary.Requests
	}
	c.Warnings = append(warnings("BASE", p.base), warnings("NEW", p.new)...)
	if min(c.BaseRuns, c.NewRuns) >= 2 {
		compareRuns(&c, p, opt.Level)
		return c, nil
	}
	return c, compareBlock(&c, p, index, opt)
}

// warnings lists what makes a side's numbers doubtful.
func warnings(side string, c *Cell) []string {
	var out []string
	for _, u := range c.Units {
		if !u.Summary.Valid {
			why := "marked invalid"
			if len(u.Summary.Warnings) > 0 {
				why += ": " + u.Summary.Warnings[0]
			}
			out = append(out, fmt.Sprintf("%s repetition %d %s", side, u.Rep, why))
		}
	}
	return out
}

func unitOf(metric string) string {
	switch metric {
	case "throughput":
		return "req/s"
	case "errors":
		return "share"
	}
	return "ms"
}

func changeOf(metric string) string {
	if metric == "errors" {
		return "difference"
	}
	return "ratio"
}

// runValue is one run's value of a metric, from its summary.
func runValue(s metrics.Summary, metric string) float64 {
	switch metric {
	case "p50":
		return s.Latency.P50
	case "p90":
		return s.Latency.P90
	case "p99":
		return s.Latency.P99
	case "mean":
		return s.Latency.Mean
	case "throughput":
		return s.ThroughputRPS
	case "errors":
		if s.Requests == 0 {
			return math.NaN()
		}
		return float64(s.Requests-s.Successes) / float64(s.Requests)
	}
	return math.NaN()
}

func compareRuns(c *Comparison, p pair, level float64) {
	c.Method = MethodRuns
	c.MethodDetail = fmt.Sprintf("%d vs %d runs, one value per run from its summary; ratio of means with Fieller's interval (Welch degrees of freedom), errors by difference with Welch's interval",
		c.BaseRuns, c.NewRuns)
	for _, m := range Metrics {
		var b, n []float64
		for _, u := range p.base.Units {
			b = append(b, runValue(u.Summary, m))
		}
		for _, u := range p.new.Units {
			n = append(n, runValue(u.Summary, m))
		}
		res := MetricResult{Metric: m, Unit: unitOf(m), Change: changeOf(m), Base: Num(stats.Mean(b)), New: Num(stats.Mean(n)),
			BaseN: int64(len(b)), NewN: int64(len(n)), NUnit: "runs"}
		var est, lo, hi float64
		if m == "errors" {
			est, lo, hi, _ = stats.RunDiff(b, n, level)
		} else {
			est, lo, hi, _ = stats.RunRatio(b, n, level)
		}
		res.Estimate, res.Lo, res.Hi = Num(est), Num(lo), Num(hi)
		res.Verdict = verdict(m, lo, hi)
		c.Metrics = append(c.Metrics, res)
	}
}

// verdict reads an interval: of NEW/BASE, or of NEW − BASE for errors.
func verdict(metric string, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return VerdictUnknown
	}
	switch metric {
	case "errors":
		switch {
		case lo > 0:
			return VerdictMoreErrors
		case hi < 0:
			return VerdictFewerErrors
		}
	case "throughput":
		switch {
		case lo > 1:
			return VerdictFaster
		case hi < 1:
			return VerdictSlower
		}
	default: // latency
		switch {
		case hi < 1:
			return VerdictFaster
		case lo > 1:
			return VerdictSlower
		}
	}
	return VerdictSame
}

// series is one side's records as time series, in send order.
type series struct {
	latency  []float64 // ms
	failed   []float64 // 1 for a failed request, 0 for a success
	rate     []float64 // completions per second in consecutive intervals
	interval float64   // their length in seconds
}

// minIntervals is the fewest throughput intervals a run is cut into: runs
// of 20 s or more are counted per second, shorter runs in 20 intervals.
const minIntervals = 20

func readSeries(c *Cell) (*series, error) {
	s := &series{}
	// Several runs on one side (compared with a single run on the other)
	// are concatenated in repetition order; the few blocks that straddle
	// two runs do not matter, but the runs' differences are not an
	// interval's worth of information and the method detail says so.
	for _, u := range c.Units {
		rows, err := readRows(u.Dir)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(rows, func(a, b row) int {
			return cmp.Or(cmp.Compare(a.Intended, b.Intended), cmp.Compare(a.Seq, b.Seq))
		})
		if len(rows) == 0 {
			continue
		}
		t0, t1 := rows[0].Intended, int64(math.MinInt64)
		for _, r := range rows {
			s.latency = append(s.latency, r.LatencyMs)
			f := 0.0
			if r.Error != "" {
				f = 1
			}
			s.failed = append(s.failed, f)
			t1 = max(t1, r.Intended+int64(r.LatencyMs*1e6))
		}
		span := float64(t1-t0) / 1e9
		width := 1.0
		if span < minIntervals {
			width = span / minIntervals
		}
		if !(width > 0) {
			continue
		}
		if s.interval == 0 {
			s.interval = width
		}
		s.interval = math.Min(s.interval, width)
		counts := make([]float64, int(span/width))
		for _, r := range rows {
			done := float64(r.Intended+int64(r.LatencyMs*1e6)-t0) / 1e9
			if i := int(done / width); i < len(counts) {
				counts[i]++
			}
		}
		for _, k := range counts {
			s.rate = append(s.rate, k/width)
		}
	}
	return s, nil
}

// boot is one side's bootstrap: the statistics of every resample.
type boot struct {
	est                 [6]float64 // on the data, in Metrics order
	draws               [6][]float64
	blockLat, blockRate int
	requests, intervals int
	interval            float64
}

var latencyQuantiles = []float64{0.5, 0.9, 0.99} // Metrics[0:3]

func bootstrap(s *series, resamples int, seed uint64) *boot {
	b := &boot{requests: len(s.latency), intervals: len(s.rate), interval: s.interval}
	for i, q := range latencyQuantiles {
		b.est[i] = stats.Quantile(s.latency, q)
	}
	b.est[3] = stats.Mean(s.latency)
	b.est[4] = stats.Mean(s.rate)
	b.est[5] = stats.Mean(s.failed)
	if len(s.latency) == 0 {
		return b
	}
	// The quantiles and the mean of a resample come from the same blocks
	// (the same seed draws the same starts).
	b.blockLat = stats.BlockLength(s.latency)
	for _, row := range stats.BlockQuantiles(s.latency, latencyQuantiles, b.blockLat, resamples, seed) {
		for i := range latencyQuantiles {
			b.draws[i] = append(b.draws[i], row[i])
		}
	}
	b.draws[3] = stats.BlockMeans(s.latency, b.blockLat, resamples, seed)
	if len(s.rate) > 0 {
		b.blockRate = stats.BlockLength(s.rate)
		b.draws[4] = stats.BlockMeans(s.rate, b.blockRate, resamples, seed+1)
	}
	b.draws[5] = stats.BlockMeans(s.failed, stats.BlockLength(s.failed), resamples, seed+2)
	return b
}

func compareBlock(c *Comparison, p pair, index int, opt Options) error {
	sides := [2]*Cell{p.base, p.new}
	var boots [2]*boot
	for i, cell := range sides {
		s, err := readSeries(cell)
		if err != nil {
			return err
		}
		// Independent streams for BASE and NEW, distinct for every pair.
		seed := opt.Seed*1_000_003 + uint64(index)*8 + uint64(i)*4
		boots[i] = bootstrap(s, opt.Resamples, seed)
	}
	base, new := boots[0], boots[1]
	c.Method = MethodBlock
	c.MethodDetail = fmt.Sprintf("circular-block bootstrap over time within each run (%s), "+
		"blocks of %d (BASE) and %d (NEW) requests by the Politis–White rule, %d resamples each, "+
		"throughput from completions per %s; run-to-run variation is not in these intervals",
		runsNote(c), base.blockLat, new.blockLat, opt.Resamples, intervalName(math.Min(base.interval, new.interval)))
	for i, m := range Metrics {
		res := MetricResult{Metric: m, Unit: unitOf(m), Change: changeOf(m), Base: Num(base.est[i]), New: Num(new.est[i]),
			BaseN: int64(base.requests), NewN: int64(new.requests), NUnit: "requests"}
		if m == "throughput" {
			res.BaseN, res.NewN, res.NUnit = int64(base.intervals), int64(new.intervals), "intervals"
		}
		est, lo, hi := math.NaN(), math.NaN(), math.NaN()
		if len(base.draws[i]) > 0 && len(new.draws[i]) == len(base.draws[i]) {
			d := make([]float64, len(base.draws[i]))
			if m == "errors" {
				est = new.est[i] - base.est[i]
				for r := range d {
					d[r] = new.draws[i][r] - base.draws[i][r]
				}
			} else {
				est = ratio(new.est[i], base.est[i])
				for r := range d {
					d[r] = ratio(new.draws[i][r], base.draws[i][r])
				}
			}
			lo, hi = stats.PercentileInterval(d, opt.Level)
		} else if m == "errors" {
			est = new.est[i] - base.est[i]
		} else {
			est = ratio(new.est[i], base.est[i])
		}
		res.Estimate, res.Lo, res.Hi = Num(est), Num(lo), Num(hi)
		res.Verdict = verdict(m, lo, hi)
		c.Metrics = append(c.Metrics, res)
	}
	return nil
}

// ratio is x/y for positive quantities; NaN when y is 0 and x is too,
// +Inf when only y is.
func ratio(x, y float64) float64 {
	if y == 0 {
		if x == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return x / y
}

func runsNote(c *Comparison) string {
	switch {
	case c.BaseRuns == 1 && c.NewRuns == 1:
		return "1 vs 1 run"
	default:
		return fmt.Sprintf("%d vs %d runs: the side with several has them concatenated, since a single run cannot be compared run by run", c.BaseRuns, c.NewRuns)
	}
}

func intervalName(width float64) string {
	if width >= 1 || width == 0 {
		return "second"
	}
	return fmt.Sprintf("%.3g s (runs under %d s are cut in %d)", width, minIntervals, minIntervals)
}
