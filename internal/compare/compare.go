package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/stats"
)

// Verdicts. What is compared are the figures of summarymetric.All. A
// figure is worse when the whole interval of its change (NEW/BASE, or
// NEW − BASE for errors) lies past the neutral line (1, or 0) on its
// worse side, and better when it lies on the other; the words are the
// figure's own (latency and throughput faster or slower, errors more or
// fewer). A bounded interval across the line is the same within noise;
// an unbounded one (Fieller's, when BASE's runs are too few or too
// spread to tell their mean from 0) says nothing, so it is unknown, as is
// no interval at all.
const (
	VerdictFaster      = summarymetric.Faster
	VerdictSlower      = summarymetric.Slower
	VerdictSame        = "same (within noise)"
	VerdictMoreErrors  = summarymetric.MoreErrors
	VerdictFewerErrors = summarymetric.FewerErrors
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
	Dir  string `json:"dir"`
	Kind string `json:"kind"` // run or load
	// Source is what the side was built from when both sides are one
	// run's (msbench ab: a git ref and its commit, or the working tree).
	Source string   `json:"source,omitempty"`
	Notes  []string `json:"notes,omitempty"`
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
	Metric string             `json:"metric"`
	Unit   summarymetric.Unit `json:"unit"` // ms, req/s, or share (errors)
	Base   Num                `json:"base"`
	New    Num                `json:"new"`
	// Change is "ratio" (Estimate = NEW/BASE) or "difference" (Estimate =
	// NEW − BASE, for errors, whose BASE is often 0).
	Change   summarymetric.Change `json:"change"`
	Estimate Num                  `json:"estimate"`
	Lo       Num                  `json:"ci_lo"`
	Hi       Num                  `json:"ci_hi"`
	BaseN    int64                `json:"base_n"`
	NewN     int64                `json:"new_n"`
	NUnit    string               `json:"n_unit"` // runs, requests, or intervals (throughput's per-interval counts)
	Verdict  string               `json:"verdict"`
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
	c := p.comparison()
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
		compareSpread(&c, p, opt.Level, func(d summarymetric.Descriptor) stats.Spread {
			xs := runValues(several, d)
			for i, x := range xs {
				xs[i] = byChange[d.Change].scale(x)
			}
			return stats.SampleSpread(xs)
		})
	default:
		return c, compareBlock(&c, p, index, opt)
	}
	return c, nil
}

// comparison starts the comparison of p: the cells it names, the runs and
// requests on each side, and what makes either doubtful.
func (p pair) comparison() Comparison {
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
	return c
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

// changeStats are the statistics a kind of change is estimated with.
type changeStats struct {
	// runs is the change of the means of per-run values with its interval
	// from how the runs spread.
	runs func(base, new []float64, level float64) (est, lo, hi float64, n int)
	// ci is the interval around a change given a known run-to-run spread.
	ci func(s stats.Spread, est float64, nBase, nNew int, level float64) (lo, hi float64)
	// pairs is the run-to-run spread from A/A pairs, grouped by the
	// deployments they share, and scale the value it is the spread of
	// (NoiseSpread.Scale).
	pairs     func([][][2]float64) stats.Spread
	scale     func(float64) float64
	scaleName string
}

// byChange: a ratio's spread is of logs (a deployment moves a latency by
// a factor), a difference's of the values themselves.
var byChange = map[summarymetric.Change]changeStats{
	summarymetric.Ratio: {runs: stats.RunRatio, ci: stats.Spread.RatioCI, pairs: stats.LogSpread,
		scale: math.Log, scaleName: "log"}, // the log is NaN for a value not positive, and so no spread
	summarymetric.Difference: {runs: stats.RunDiff, ci: stats.Spread.DiffCI, pairs: stats.DiffSpread,
		scale: func(x float64) float64 { return x }, scaleName: "value"},
}

// runValues are a cell's values of a figure, one per run, from the
// summaries.
func runValues(c *Cell, d summarymetric.Descriptor) []float64 {
	xs := make([]float64, len(c.Units))
	for i, u := range c.Units {
		xs[i] = d.Of(u.Summary)
	}
	return xs
}

func compareRuns(c *Comparison, p pair, level float64) {
	c.Method = MethodRuns
	c.MethodDetail = fmt.Sprintf("%d vs %d runs, one value per run from its summary; ratio of means with Fieller's interval (Welch degrees of freedom, cut at 0), errors by difference with Welch's interval",
		c.BaseRuns, c.NewRuns)
	fromRuns(c, p, level, func(d summarymetric.Descriptor, b, n []float64, level float64) (est, lo, hi float64) {
		est, lo, hi, _ = byChange[d.Change].runs(b, n, level)
		return est, lo, hi
	})
}

// compareSpread gives each figure the interval of a known run-to-run
// spread around the change of the sides' means.
func compareSpread(c *Comparison, p pair, level float64, spread func(d summarymetric.Descriptor) stats.Spread) {
	fromRuns(c, p, level, func(d summarymetric.Descriptor, b, n []float64, level float64) (est, lo, hi float64) {
		est = d.Change.Of(stats.Mean(n), stats.Mean(b))
		lo, hi = byChange[d.Change].ci(spread(d), est, len(b), len(n), level)
		return est, lo, hi
	})
}

// fromRuns fills c's metrics from the per-run values of both sides, with
// interval giving the estimate and its interval at a level; the interval
// is cut to the values a change of the figure can take.
func fromRuns(c *Comparison, p pair, level float64, interval func(d summarymetric.Descriptor, b, n []float64, level float64) (est, lo, hi float64)) {
	for _, d := range summarymetric.All {
		b, n := runValues(p.base, d), runValues(p.new, d)
		rng := d.ChangeRange()
		within := func(level float64) (est, lo, hi float64) {
			est, lo, hi = interval(d, b, n, level)
			return est, rng.Clamp(lo), rng.Clamp(hi)
		}
		res := newResult(d, stats.Mean(b), stats.Mean(n))
		res.BaseN, res.NewN, res.NUnit = int64(len(b)), int64(len(n)), "runs"
		est, lo, hi := within(level)
		res.setInterval(d, est, lo, hi)
		res.ci = func(level float64) (lo, hi float64) {
			_, lo, hi = within(level)
			return lo, hi
		}
		c.Metrics = append(c.Metrics, res)
	}
}

// newResult starts a figure's result from the sides' values.
func newResult(d summarymetric.Descriptor, base, new float64) MetricResult {
	return MetricResult{Metric: d.Name, Unit: d.Unit, Change: d.Change, Base: Num(base), New: Num(new)}
}

// setInterval records the change and its interval, and the verdict they
// give.
func (res *MetricResult) setInterval(d summarymetric.Descriptor, est, lo, hi float64) {
	res.Estimate, res.Lo, res.Hi = Num(est), Num(lo), Num(hi)
	res.Verdict = verdict(d, lo, hi)
}

// verdict reads an interval of d's change.
func verdict(d summarymetric.Descriptor, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return VerdictUnknown
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return VerdictUnbounded
	}
	var up bool
	switch line := d.Change.Neutral(); {
	case lo > line:
		up = true
	case hi < line:
		up = false
	default:
		return VerdictSame
	}
	if up == (d.Worse == summarymetric.Up) {
		return d.Verdicts.Worse
	}
	return d.Verdicts.Better
}

// series is one side's records as the time series the figures are
// computed from (summarymetric.Series), in send order.
type series struct {
	of       map[summarymetric.Series][]float64
	interval float64 // the length in seconds of Completions' intervals
}

// minIntervals is the fewest throughput intervals a run is cut into: runs
// of 20 s or more are counted per second, shorter runs in 20 intervals.
const minIntervals = 20

// readSeries reads one run's records (the block bootstrap compares one
// run a side).
func readSeries(u Unit) (*series, error) {
	s := &series{of: map[summarymetric.Series][]float64{}}
	rows, err := records.ReadOutcomes(u.Dir.RecordsPath())
	if err != nil || len(rows) == 0 {
		return s, err
	}
	slices.SortFunc(rows, func(a, b records.Outcome) int {
		return cmp.Or(cmp.Compare(a.Intended, b.Intended), cmp.Compare(a.Seq, b.Seq))
	})
	latency, failed := make([]float64, len(rows)), make([]float64, len(rows))
	t0, t1 := rows[0].Intended, int64(math.MinInt64)
	for i, r := range rows {
		latency[i] = r.LatencyMs
		if r.Error != "" {
			failed[i] = 1
		}
		t1 = max(t1, r.Intended+int64(r.LatencyMs*1e6))
	}
	s.of[summarymetric.Latencies], s.of[summarymetric.Failures] = latency, failed
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
	for i := range counts {
		counts[i] /= s.interval
	}
	s.of[summarymetric.Completions] = counts
	return s, nil
}

// sample is one side's figure computed from its records: on the data and
// on every resample, from a series of n elements.
type sample struct {
	est   float64
	draws []float64
	n     int
}

// boot is one side's bootstrap: every figure's sample, and the block
// length of each series resampled.
type boot struct {
	figures  map[string]sample
	blocks   map[summarymetric.Series]int
	interval float64
}

// bootstrap resamples each series once, in blocks of its own length, with
// a stream of its own (seed + the series' number): the quantiles and the
// mean of one series in a resample come from the same blocks.
func bootstrap(s *series, resamples int, seed uint64) *boot {
	b := &boot{figures: map[string]sample{}, blocks: map[summarymetric.Series]int{}, interval: s.interval}
	bySeries := map[summarymetric.Series][]summarymetric.Descriptor{}
	for _, d := range summarymetric.All {
		bySeries[d.Series] = append(bySeries[d.Series], d)
	}
	for ser, ds := range bySeries {
		xs := s.of[ser]
		var quantiles []float64
		for _, d := range ds {
			b.figures[d.Name] = sample{est: d.FromSeries(xs), n: len(xs)}
			if d.Quantile > 0 {
				quantiles = append(quantiles, d.Quantile)
			}
		}
		if len(xs) == 0 {
			continue
		}
		block, stream := stats.BlockLength(xs), seed+uint64(ser)
		b.blocks[ser] = block
		var rows [][]float64 // rows[resample][i] for quantiles[i]
		if len(quantiles) > 0 {
			rows = stats.BlockQuantiles(xs, quantiles, block, resamples, stream)
		}
		var means []float64
		if len(quantiles) < len(ds) {
			means = stats.BlockMeans(xs, block, resamples, stream)
		}
		q := 0
		for _, d := range ds {
			f := b.figures[d.Name]
			if d.Quantile > 0 {
				for _, row := range rows {
					f.draws = append(f.draws, row[q])
				}
				q++
			} else {
				f.draws = means
			}
			b.figures[d.Name] = f
		}
	}
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
		base.blocks[summarymetric.Latencies], new.blocks[summarymetric.Latencies], opt.Resamples, intervalName(math.Min(base.interval, new.interval)))
	for _, d := range summarymetric.All {
		b, n := base.figures[d.Name], new.figures[d.Name]
		res := newResult(d, b.est, n.est)
		res.BaseN, res.NewN, res.NUnit = int64(b.n), int64(n.n), d.Series.Elements()
		est, lo, hi := d.Change.Of(n.est, b.est), math.NaN(), math.NaN()
		if len(b.draws) > 0 && len(n.draws) == len(b.draws) {
			changes := make([]float64, len(b.draws))
			for r := range changes {
				changes[r] = d.Change.Of(n.draws[r], b.draws[r])
			}
			lo, hi = stats.PercentileInterval(changes, opt.Level)
		}
		res.setInterval(d, est, lo, hi)
		c.Metrics = append(c.Metrics, res)
	}
	return nil
}

func intervalName(width float64) string {
	if width >= 1 || width == 0 {
		return "second"
	}
	return fmt.Sprintf("%.3g s (runs under %d s are cut in %d)", width, minIntervals, minIntervals)
}
