package claims

import (
	"fmt"
	"math"

	"github.com/msbench/msbench/internal/stats"
)

// Metric is what an analysis measured for a claim: one value per run, the
// unit of replication. Values of one run only (a percentile of its
// requests) are never resampled request by request.
type Metric struct {
	PerRun []float64
	// Ratio marks a ratio of two systems measured side by side in a run:
	// summarised by its geometric mean, and judged beyond the noise floor.
	Ratio bool
	Unit  string // e.g. "×", "ms", "share"
	// Range is what a value other than a ratio can take, e.g. &stats.Share;
	// its interval is kept in it, so that a verdict never rests on a
	// share below 0. Nil for a difference, which takes either sign.
	Range *stats.Range
	// Note says what was compared, e.g. "spring-platform / gin, median
	// upload latency, 18 size × format cases".
	Note string
}

// Estimate is a metric summarised over runs with its 95% interval.
type Estimate struct {
	Value, Lo, Hi float64 // Lo and Hi are NaN with fewer than two runs
	N             int
	Method        string
}

// Verdicts. A finding of ours holds or does not; only published claims
// are reproduced or not.
const (
	Reproduced    = "reproduced"
	NotReproduced = "not reproduced"
	Inconclusive  = "inconclusive"
	NotMeasured   = "not measured"
	Holds         = "finding: holds"
	DoesNotHold   = "finding: does not hold"
	explainedBy   = "explained by "
)

// ProvisionalBelow is the number of runs under which a verdict is marked
// provisional.
const ProvisionalBelow = 3

// Result is a claim judged.
type Result struct {
	Claim       Claim
	Estimate    Estimate
	Region      string // where the claim holds, in words, floor applied
	Verdict     string
	Provisional bool
	Why         string
	Note        string
}

// Summarise computes a metric's estimate: the geometric mean of ratios or
// the mean of other values, with a t-interval over runs kept in the
// metric's range.
func Summarise(m Metric) Estimate {
	var xs []float64
	for _, x := range m.PerRun {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
	}
	e := Estimate{N: len(xs), Lo: math.NaN(), Hi: math.NaN(), Value: math.NaN()}
	switch {
	case len(xs) == 0:
		return e
	case m.Ratio && positive(xs):
		e.Value, e.Lo, e.Hi = stats.GeoMeanCI(xs, 0.95)
		e.Method = "geometric mean over runs, t-interval on logs"
	default:
		e.Value = stats.Mean(xs)
		if len(xs) > 1 {
			rng := stats.Unbounded
			if m.Range != nil {
				rng = *m.Range
			}
			e.Lo, e.Hi = stats.MeanCIIn(xs, 0.95, rng)
		}
		e.Method = "mean over runs, t-interval"
	}
	return e
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if x <= 0 {
			return false
		}
	}
	return true
}

// Judge decides a claim on the metrics an analysis measured. floor is the
// machine's noise floor as a share (how far identical systems came apart
// in this run): a ratio claim's region never reaches closer to 1 than it,
// so a difference inside the floor is never called real.
func Judge(c Claim, metrics map[string]Metric, floor float64) Result {
	r := Result{Claim: c}
	m, ok := metrics[c.Metric]
	if !ok {
		r.Verdict, r.Why = NotMeasured, "this run measured no "+c.Metric
		return r
	}
	r.Note = m.Note
	r.Estimate = Summarise(m)
	lo, hi := widen(c.Expect, m.Ratio, floor)
	r.Region = regionText(lo, hi)
	in, why := place(r.Estimate, lo, hi)
	r.Why = why
	r.Provisional = r.Estimate.N > 0 && r.Estimate.N < ProvisionalBelow
	switch {
	case r.Estimate.N == 0:
		r.Verdict, r.Why = NotMeasured, "no run measured "+c.Metric
	case in == inside && c.Ours:
		r.Verdict = Holds
	case in == inside:
		r.Verdict = Reproduced
		if c.Explain != nil {
			if e, ok := metrics[c.Explain.Metric]; ok {
				est := Summarise(e)
				elo, ehi := widen(c.Explain.Expect, e.Ratio, floor)
				if where, _ := place(est, elo, ehi); where == inside && est.N > 1 {
					r.Verdict = explainedBy + c.Explain.Text
					r.Why += fmt.Sprintf("; %s: %s, in %s", c.Explain.Metric, format(est), regionText(elo, ehi))
				}
			}
		}
	case in == outside && c.Ours:
		r.Verdict = DoesNotHold
	case in == outside:
		r.Verdict = NotReproduced
	default:
		r.Verdict = Inconclusive
	}
	return r
}

type placement int

const (
	inside placement = iota
	outside
	straddles
)

// place says where an estimate's interval lies against the region (lo,
// hi); with one run the point estimate decides, provisionally. An end
// clamped to the metric's range moves only across region edges outside
// that range, so clamping settles a verdict only where the claim's region
// reaches values the metric cannot take; an end on an edge (a share's 0
// against "above 0") is not past it.
func place(e Estimate, lo, hi float64) (placement, string) {
	if e.N == 0 {
		return straddles, ""
	}
	if math.IsNaN(e.Lo) {
		if e.Value > lo && e.Value < hi {
			return inside, "one run: no interval, the point estimate lies in the claim's region"
		}
		return outside, "one run: no interval, the point estimate lies outside the claim's region"
	}
	switch {
	case e.Lo > lo && e.Hi < hi:
		return inside, "the whole 95% interval lies in the claim's region"
	case e.Hi <= lo || e.Lo >= hi:
		return outside, "the whole 95% interval lies outside the claim's region"
	default:
		return straddles, "the 95% interval straddles the edge of the claim's region"
	}
}

// widen applies the noise floor to a ratio claim, so that a difference
// inside it is never called real: a claim that one system is slower (a
// lower bound at or above 1) or faster (an upper bound at or below 1)
// needs the ratio beyond the floor, and a claim that they are about the
// same (a bound on the other side of 1) holds as long as the ratio stays
// within it. A near-margin is never narrower than the floor.
func widen(e Expect, ratio bool, floor float64) (lo, hi float64) {
	if e.Near != nil && e.Margin < floor {
		e.Margin = floor
	}
	lo, hi = e.region()
	if !ratio || floor <= 0 {
		return lo, hi
	}
	up, down := 1+floor, 1/(1+floor)
	switch {
	case math.IsInf(lo, -1):
	case lo >= 1:
		lo = max(lo, up)
	default:
		lo = min(lo, down)
	}
	switch {
	case math.IsInf(hi, 1):
	case hi <= 1:
		hi = min(hi, down)
	default:
		hi = max(hi, up)
	}
	return lo, hi
}

func regionText(lo, hi float64) string {
	switch {
	case math.IsInf(hi, 1):
		return "> " + num(lo)
	case math.IsInf(lo, -1):
		return "< " + num(hi)
	default:
		return num(lo) + " to " + num(hi)
	}
}

// Measured says the estimate in words: value (interval), n and method.
func (r Result) Measured() string {
	if r.Estimate.N == 0 {
		return "–"
	}
	return format(r.Estimate)
}

func format(e Estimate) string {
	s := fmt.Sprintf("%.3g", e.Value)
	if !math.IsNaN(e.Lo) {
		s += fmt.Sprintf(" (95%% CI %.3g–%.3g)", e.Lo, e.Hi)
	}
	return s + fmt.Sprintf(", n=%d", e.N)
}

// VerdictText is the verdict with its provisional mark, in words.
func (r Result) VerdictText() string {
	if r.Provisional {
		return fmt.Sprintf("%s (provisional: %d run(s), fewer than %d)", r.Verdict, r.Estimate.N, ProvisionalBelow)
	}
	return r.Verdict
}
