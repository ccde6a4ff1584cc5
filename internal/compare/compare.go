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
// on one side of 0. A bounded interval across the line is the same within
// noise; an unbounded one (Fieller's, when BASE's runs are too few or too
// spread to tell their mean from 0) says nothing, so it is unknown, as is
// no interval at all.
const (
	VerdictFaster      = "faster"
	VerdictSlower      = "slower"
	VerdictSame        = "same (within noise)"
	VerdictMoreErrors  = "more errors"
	VerdictFewerErrors = "fewer errors"
	VerdictUnknown     = "unknown (no interval)"
	VerdictUnbounded   = "unknown (unbounded interval)"
)

// Methods of Comparison, by the runs on each side. Each run gives one
// value per metric (from its summary.json) except under MethodBlock.
const (
	// MethodRuns: at least two runs a side; the interval comes from how
	// the runs spread: stats.RunRatioIn (ratio of means, Fieller–Welch,
	// clamped at 0) and, for errors, stats.RunDiff (difference of means,
	// Welch, clamped to ±100 points).
	MethodRuns = "runs"
	// MethodNoise: one run on a side (against one or several) and a noise
	// model (--noise): NEW/BASE × exp(±t·σ̂·√(1/nBASE + 1/nNEW)), σ̂ the
	// metric's run-to-run spread of logs measured on A/A runs and t on its
	// degrees of freedom (errors: the same on the difference). The A/A
	// runs' spread already holds the sampling error within a run of their
	// length, so the block bootstrap is not added to it.
	MethodNoise = "noise-model"
	// MethodOneVsRuns: one run against several, no noise model: the
	// several give the run-to-run spread (the standard deviation of their
	// logs, n − 1 degrees of freedom), taken to hold for the single run
	// too, and the interval is MethodNoise's with that spread. The several
	// are never concatenated into one long run.
	MethodOneVsRuns = "one-vs-runs"
	// MethodBlock: one run a side and no noise model; the interval comes
	// from a circular-block bootstrap over time within each side's records
	// (latencies and failures in send order, completions per interval),
	// BASE and NEW resampled independently and the ratio (or difference)
	// of their statistics taken resample by resample. It shows how much
	// the numbers would move if the runs went on, not how much a new
	// deployment would move them, so --fail-if refuses it (Apply).
	MethodBlock = "block-bootstrap"
)

// Options tune Compare; the zero value is usable.
type Options struct {
	Level     float64 // confidence level; 0 means 0.95
	Resamples int     // block bootstrap resamples; 0 means DefaultResamples
	Seed      uint64  // block bootstrap seed: the same seed gives the same intervals
	Workers   int     // cells bootstrapped at once; 0 means GOMAXPROCS
	// Noise is the run-to-run noise model for comparisons with one run on
	// a side; nil for none.
	Noise *Noise
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
	// Noise is the noise model given, nil for none.
	Noise *Noise `json:"noise,omitempty"`
	// Notes say what the options did not do (a noise model no comparison
	// needed).
	Notes []string `json:"notes,omitempty"`
	// Gate says how the --fail-if rules were tested together; nil
	// without rules.
	Gate   *Gate        `json:"gate,omitempty"`
	FailIf []RuleResult `json:"fail_if"`
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
	// ci is the interval at any level, for the gate's adjusted level; nil
	// when there is none (a result read back from JSON).
	ci func(level float64) (lo, hi float64)
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
		Noise:       opt.Noise,
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
	if opt.Noise != nil && !slices.ContainsFunc(r.Comparisons, func(c Comparison) bool { return c.Method == MethodNoise }) {
		r.Notes = append(r.Notes, "the noise model is not used: every comparison has two or more runs a side, whose spread already holds the run-to-run noise")
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
	switch {
	case min(c.BaseRuns, c.NewRuns) >= 2:
		compareRuns(&c, p, opt.Level)
	case opt.Noise != nil:
		c.Method = MethodNoise
		c.MethodDetail = fmt.Sprintf("%d vs %d runs, one value per run from its summary; NEW/BASE × exp(±t·σ·√(1/%d + 1/%d)), σ each metric's run-to-run spread measured on %d A/A pairs (%s), errors the same on the difference",
			c.BaseRuns, c.NewRuns, c.BaseRuns, c.NewRuns, opt.Noise.Pairs, opt.Noise.Dir)
		compareSpread(&c, p, opt.Level, opt.Noise.spread)
	case max(c.BaseRuns, c.NewRuns) >= 2:
		several, side := p.base, "BASE"
		if c.NewRuns > c.BaseRuns {
			several, side = p.new, "NEW"
		}
		c.Method = MethodOneVsRuns
		c.MethodDetail = fmt.Sprintf("%d vs %d runs, one value per run from its summary; the run-to-run spread is %s's %d runs' (not concatenated), taken to hold for the single run too: NEW/BASE × exp(±t·σ·√(1/%d + 1/%d)) with %d degrees of freedom",
			c.BaseRuns, c.NewRuns, side, len(several.Units), c.BaseRuns, c.NewRuns, len(several.Units)-1)
		compareSpread(&c, p, opt.Level, func(metric string) stats.Spread {
			xs := runValues(several, metric)
			if metric == "errors" {
				return stats.SampleSpread(xs)
			}
			for i, x := range xs {
				xs[i] = math.Log(x) // NaN for a value not positive, and so no spread
			}
			return stats.SampleSpread(xs)
		})
	default:
		return c, compareBlock(&c, p, index, opt)
	}
	return c, nil
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

func runValues(c *Cell, metric string) []float64 {
	xs := make([]float64, len(c.Units))
	for i, u := range c.Units {
		xs[i] = runValue(u.Summary, metric)
	}
	return xs
}

// errorRange is the range of a difference of error shares.
var errorRange = stats.Range{Lo: -1, Hi: 1}

func compareRuns(c *Comparison, p pair, level float64) {
	c.Method = MethodRuns
	c.MethodDetail = fmt.Sprintf("%d vs %d runs, one value per run from its summary; ratio of means with Fieller's interval (Welch degrees of freedom, cut at 0), errors by difference with Welch's interval",
		c.BaseRuns, c.NewRuns)
	fromRuns(c, p, level, func(metric string, b, n []float64, level float64) (est, lo, hi float64) {
		if metric == "errors" {
			est, lo, hi, _ = stats.RunDiff(b, n, level)
			return est, errorRange.Clamp(lo), errorRange.Clamp(hi)
		}
		est, lo, hi, _ = stats.RunRatioIn(b, n, level, stats.NonNegative)
		return est, lo, hi
	})
}

// compareSpread gives each metric the interval of a known run-to-run
// spread (Spread.RatioCI, or DiffCI for errors) around the ratio (or
// difference) of the sides' means.
func compareSpread(c *Comparison, p pair, level float64, spread func(metric string) stats.Spread) {
	fromRuns(c, p, level, func(metric string, b, n []float64, level float64) (est, lo, hi float64) {
		s := spread(metric)
		if metric == "errors" {
			est = stats.Mean(n) - stats.Mean(b)
			lo, hi = s.DiffCI(est, len(b), len(n), level)
			return est, errorRange.Clamp(lo), errorRange.Clamp(hi)
		}
		est = ratio(stats.Mean(n), stats.Mean(b))
		lo, hi = s.RatioCI(est, len(b), len(n), level)
		return est, lo, hi
	})
}

// fromRuns fills c's metrics from the per-run values of both sides, with
// interval giving the estimate and its interval at a level.
func fromRuns(c *Comparison, p pair, level float64, interval func(metric string, b, n []float64, level float64) (est, lo, hi float64)) {
	for _, m := range Metrics {
		b, n := runValues(p.base, m), runValues(p.new, m)
		res := MetricResult{Metric: m, Unit: unitOf(m), Change: changeOf(m), Base: Num(stats.Mean(b)), New: Num(stats.Mean(n)),
			BaseN: int64(len(b)), NewN: int64(len(n)), NUnit: "runs"}
		est, lo, hi := interval(m, b, n, level)
		res.Estimate, res.Lo, res.Hi = Num(est), Num(lo), Num(hi)
		res.Verdict = verdict(m, lo, hi)
		res.ci = func(level float64) (lo, hi float64) {
			_, lo, hi = interval(m, b, n, level)
			return lo, hi
		}
		c.Metrics = append(c.Metrics, res)
	}
}

// verdict reads an interval: of NEW/BASE, or of NEW − BASE for errors.
func verdict(metric string, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return VerdictUnknown
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return VerdictUnbounded
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

// readSeries reads one run's records (the block bootstrap compares one
// run a side).
func readSeries(u Unit) (*series, error) {
	s := &series{}
	rows, err := readRows(u.Dir)
	if err != nil || len(rows) == 0 {
		return s, err
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Intended, b.Intended), cmp.Compare(a.Seq, b.Seq))
	})
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
	s.interval = 1.0
	if span < minIntervals {
		s.interval = span / minIntervals
	}
	if !(s.interval > 0) {
		return s, nil
	}
	counts := make([]float64, int(span/s.interval))
	for _, r := range rows {
		done := float64(r.Intended+int64(r.LatencyMs*1e6)-t0) / 1e9
		if i := int(done / s.interval); i < len(counts) {
			counts[i]++
		}
	}
	for _, k := range counts {
		s.rate = append(s.rate, k/s.interval)
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
		s, err := readSeries(cell.Units[0])
		if err != nil {
			return err
		}
		// Independent streams for BASE and NEW, distinct for every pair.
		seed := opt.Seed*1_000_003 + uint64(index)*8 + uint64(i)*4
		boots[i] = bootstrap(s, opt.Resamples, seed)
	}
	base, new := boots[0], boots[1]
	c.Method = MethodBlock
	c.MethodDetail = fmt.Sprintf("circular-block bootstrap over time within each run (1 vs 1 run), "+
		"blocks of %d (BASE) and %d (NEW) requests by the Politis–White rule, %d resamples each, "+
		"throughput from completions per %s; run-to-run variation is not in these intervals, so --fail-if refuses them",
		base.blockLat, new.blockLat, opt.Resamples, intervalName(math.Min(base.interval, new.interval)))
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

func intervalName(width float64) string {
	if width >= 1 || width == 0 {
		return "second"
	}
	return fmt.Sprintf("%.3g s (runs under %d s are cut in %d)", width, minIntervals, minIntervals)
}
