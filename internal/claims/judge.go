package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msbench/msbench/internal/stats"
)

// Metric is what an analysis measured for a claim: one value per run, the
// unit of replication. Values of one run only (a percentile of its
// requests) are never resampled request by request.
type Metric struct {
	PerRun []float64
	// Ratio marks a ratio (of two systems measured side by side in a
	// run, or of two figures of one): summarised by its geometric mean.
	Ratio bool
	// Kind is the kind of quantity the values are made of, which the
	// noise model knows the run-to-run spread of: with one run, the
	// interval comes from it. "" when the A/A twin measures nothing like
	// it (a share, a time to failure, a difference): one run of such a
	// metric gets no interval and so no decisive verdict.
	Kind Kind
	// Deployments is how many deployments' values a value divides: 2 for
	// a ratio of two systems (each brings its own run-to-run noise), 1
	// for one system's figure or a ratio within one deployment. 0 means
	// 2 for a ratio and 1 otherwise.
	Deployments int
	Unit        string // e.g. "×", "ms", "share"
	// Range is what a value other than a ratio can take, e.g. &stats.Share;
	// its interval is kept in it, so that a verdict never rests on a
	// share below 0. Nil for a difference, which takes either sign.
	Range *stats.Range
	// Note says what was compared, e.g. "spring-platform / gin, median
	// upload latency, 18 size × format cases".
	Note string
	// All makes the metric a conjunction: the claim holds where it holds
	// for every part (e.g. every pairwise ratio X/Y in every step, for
	// "X is fastest everywhere"), fails where it fails for any, and is
	// inconclusive otherwise. PerRun is then unused; every part shares
	// the metric's Ratio, Kind, Deployments and Range. An extreme (X over
	// the best of the others) is biased away from 1 even when all are
	// equal; each pairwise ratio is not.
	All []Part
}

// Measured reports whether any run measured the metric (any part of it).
func (m Metric) Measured() bool {
	return len(m.PerRun) > 0 || slices.ContainsFunc(m.All, func(p Part) bool { return len(p.PerRun) > 0 })
}

// Part is one comparison of a conjunction, named for the report.
type Part struct {
	Label  string
	PerRun []float64
}

// Kind is a kind of quantity the A/A twin measures, for the noise model.
type Kind string

// The kinds the noise model estimates from the A/A twin's steps.
const (
	Latency    Kind = "latency"    // a median latency (p50)
	Tail       Kind = "tail"       // a high latency quantile (p95, p99)
	Throughput Kind = "throughput" // requests completed per second
	CPU        Kind = "cpu"        // CPU time of the deployment's processes
	Memory     Kind = "memory"     // peak memory of the deployment's processes
)

// Kinds lists the kinds in the order a report shows them.
var Kinds = []Kind{Latency, Tail, Throughput, CPU, Memory}

// Noise is the noise model: per kind, the run-to-run standard deviation
// of one deployment's log value, from the A/A twin. A kind it lacks, or
// one with no pairs, has no model.
type Noise map[Kind]stats.Spread

// Level is the confidence every verdict rests on: of one interval, or,
// for a conjunction, of all its intervals together (Bonferroni).
const Level = 0.95

// Estimate is a metric summarised over runs with its interval.
type Estimate struct {
	Value, Lo, Hi float64 // Lo and Hi are NaN when there is no interval
	N             int
	Level         float64 // of the interval
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

// fromSpread is the method of a one-run interval: it says where the
// interval comes from, as every report must beside such a verdict.
const fromSpread = "provisional: interval from the A/A spread, not from repetitions"

// Result is a claim judged.
type Result struct {
	Claim Claim
	// Estimate is the metric's, or for a conjunction the part that
	// decided (the first wholly outside, else the first straddling, else
	// the nearest to the edge).
	Estimate    Estimate
	Region      string // where the claim holds, in words
	Verdict     string
	Provisional bool
	Why         string
	Note        string
	// Parts are a conjunction's comparisons, judged; Shown names the one
	// in Estimate. Empty for a metric of one comparison.
	Parts []PartResult
	Shown string
}

// PartResult is one comparison of a conjunction, judged.
type PartResult struct {
	Label    string
	Estimate Estimate
	Place    string // where its interval lies: in, outside, straddles
}

// Summarise computes a metric's estimate at the level given: over two
// runs or more, the geometric mean of ratios or the mean of other values
// with a t-interval over runs kept in the metric's range; of one run,
// the value with an interval from the noise model, when it has the
// metric's kind.
func Summarise(m Metric, noise Noise, level float64) Estimate {
	return summarise(m.PerRun, m, noise, level)
}

func summarise(perRun []float64, m Metric, noise Noise, level float64) Estimate {
	var xs []float64
	for _, x := range perRun {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
	}
	nan := math.NaN()
	e := Estimate{N: len(xs), Lo: nan, Hi: nan, Value: nan, Level: level}
	rng := stats.Unbounded
	if m.Range != nil {
		rng = *m.Range
	}
	switch {
	case len(xs) == 0:
		return e
	case len(xs) == 1:
		e.Value = xs[0]
		e.Method = "one run, no interval: the A/A twin gives no spread for a metric of this kind"
		s, ok := noise[m.Kind]
		if !ok || s.DF == 0 || math.IsNaN(s.Sigma) || !(e.Value > 0) {
			return e
		}
		// One run lands where the deployment put it: its log is off the
		// truth by the deployments' own spread, √d·σ for a value of d
		// deployments; σ̂ rests on DF pairs, hence t with DF degrees.
		half := tQuantile(level, float64(s.DF)) * s.Sigma * math.Sqrt(float64(m.deployments()))
		e.Lo, e.Hi = rng.Clamp(e.Value*math.Exp(-half)), rng.Clamp(e.Value*math.Exp(half))
		e.Method = fmt.Sprintf("%s (σ̂ %.1f%% per deployment, %d degrees of freedom)", fromSpread, 100*s.Sigma, s.DF)
	case m.Ratio && positive(xs):
		e.Value, e.Lo, e.Hi = stats.GeoMeanCI(xs, level)
		e.Method = "geometric mean over runs, t-interval on logs"
	default:
		e.Value = stats.Mean(xs)
		e.Lo, e.Hi = stats.MeanCIIn(xs, level, rng)
		e.Method = "mean over runs, t-interval"
	}
	return e
}

// tQuantile is the two-sided critical value of Student's t at level.
func tQuantile(level, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
}

func (m Metric) deployments() int {
	switch {
	case m.Deployments > 0:
		return m.Deployments
	case m.Ratio:
		return 2
	}
	return 1
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if x <= 0 {
			return false
		}
	}
	return true
}

// Judge decides a claim on the metrics an analysis measured, with the
// noise model for metrics measured once. The claim's region is the
// paper's, never moved: a result within the noise is inconclusive because
// its interval straddles an edge, not because the edge moved.
func Judge(c Claim, metrics map[string]Metric, noise Noise) Result {
	r := Result{Claim: c}
	m, ok := metrics[c.Metric]
	if !ok {
		r.Verdict, r.Why = NotMeasured, "this run measured no "+c.Metric
		return r
	}
	r.Note = m.Note
	lo, hi := c.Expect.region()
	r.Region = regionText(lo, hi)
	in := r.assess(m, lo, hi, noise)
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
				est := Summarise(e, noise, Level)
				elo, ehi := c.Explain.Expect.region()
				if where, _ := place(est, elo, ehi); where == inside {
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

// assess summarises m, places it against the region (lo, hi) and sets
// the result's estimate and why. A conjunction's parts are each given a
// Bonferroni interval at 1 − (1 − Level)/k, so that all k hold together
// at Level: then "every part inside", "some part outside" and the
// verdict resting on either are all statements at Level.
func (r *Result) assess(m Metric, lo, hi float64, noise Noise) placement {
	if m.All == nil {
		r.Estimate = Summarise(m, noise, Level)
		where, why := place(r.Estimate, lo, hi)
		r.Why = why
		return where
	}
	k := len(m.All)
	level := 1 - (1-Level)/float64(k)
	// The part shown is the one that decides: the first wholly outside,
	// else the first straddling, else the one nearest the edge.
	shown, rank, margin := -1, 3, math.Inf(1)
	var out, straddle []string
	for i, p := range m.All {
		e := summarise(p.PerRun, m, noise, level)
		where, _ := place(e, lo, hi)
		pr := PartResult{Label: p.Label, Estimate: e}
		switch {
		case e.N == 0:
			pr.Place, straddle = "not measured", append(straddle, p.Label+" not measured")
		case where == outside:
			pr.Place, out = "outside", append(out, p.Label)
			if rank > 0 {
				shown, rank = i, 0
			}
		case where == straddles:
			pr.Place, straddle = "straddles", append(straddle, p.Label)
			if rank > 1 {
				shown, rank = i, 1
			}
		default:
			pr.Place = "in"
			if d := edgeMargin(e, lo, hi, m.Ratio); rank >= 2 && d < margin {
				shown, rank, margin = i, 2, d
			}
		}
		r.Parts = append(r.Parts, pr)
	}
	if shown < 0 {
		return straddles // nothing measured
	}
	r.Estimate, r.Shown = r.Parts[shown].Estimate, r.Parts[shown].Label
	n := 0
	for _, p := range r.Parts {
		n = max(n, p.Estimate.N)
	}
	r.Estimate.N = n
	each := fmt.Sprintf("%d comparisons, each interval at %s (Bonferroni, %s together)", k, pct(level), pct(Level))
	switch {
	case len(out) > 0:
		r.Why = fmt.Sprintf("%s: the whole interval of %s lies outside the claim's region", each, strings.Join(out, ", "))
		return outside
	case len(straddle) > 0:
		r.Why = fmt.Sprintf("%s: %d of them straddle the edge (%s)", each, len(straddle), strings.Join(straddle, ", "))
		return straddles
	}
	r.Why = fmt.Sprintf("%s: every interval lies wholly in the claim's region", each)
	return inside
}

// edgeMargin is how far an interval keeps from the region's nearer edge,
// on the log scale for a ratio: what makes one part the nearest to
// failing.
func edgeMargin(e Estimate, lo, hi float64, ratio bool) float64 {
	d := func(a, b float64) float64 {
		if ratio && a > 0 && b > 0 {
			return math.Log(b / a)
		}
		return b - a
	}
	return min(d(lo, e.Lo), d(e.Hi, hi))
}

type placement int

const (
	inside placement = iota
	outside
	straddles
)

// place says where an estimate's interval lies against the region (lo,
// hi). Without an interval (one run, no noise model) nothing is decided:
// the point estimate of one run lands on either side of an edge it sits
// on by a coin flip. An end clamped to the metric's range moves only
// across region edges outside that range, so clamping settles a verdict
// only where the claim's region reaches values the metric cannot take;
// an end on an edge (a share's 0 against "above 0") is not past it.
func place(e Estimate, lo, hi float64) (placement, string) {
	if e.N == 0 {
		return straddles, ""
	}
	if math.IsNaN(e.Lo) {
		return straddles, "one run and no A/A spread for a metric of this kind: no interval, so no verdict (one run's value lands either side of an edge by chance)"
	}
	level := pct(e.Level)
	switch {
	case e.Lo > lo && e.Hi < hi:
		return inside, "the whole " + level + " interval lies in the claim's region"
	case e.Hi <= lo || e.Lo >= hi:
		return outside, "the whole " + level + " interval lies outside the claim's region"
	default:
		return straddles, "the " + level + " interval straddles the edge of the claim's region"
	}
}

func pct(level float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", 100*level), "0"), ".") + "%"
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

// Measured says the estimate in words: value (interval), n and method;
// for a conjunction, which part it is.
func (r Result) Measured() string {
	if r.Estimate.N == 0 {
		return "–"
	}
	if r.Shown != "" {
		return fmt.Sprintf("%s: %s (the deciding one of %d comparisons)", r.Shown, format(r.Estimate), len(r.Parts))
	}
	return format(r.Estimate)
}

func format(e Estimate) string {
	s := fmt.Sprintf("%.3g", e.Value)
	if !math.IsNaN(e.Lo) {
		s += fmt.Sprintf(" (%s CI %.3g–%.3g)", pct(e.Level), e.Lo, e.Hi)
	}
	return s + fmt.Sprintf(", n=%d", e.N)
}

// VerdictText is the verdict with its multiplicity and provisional mark,
// in words.
func (r Result) VerdictText() string {
	v := r.Verdict
	if len(r.Parts) > 1 {
		v += fmt.Sprintf(" (over %d pairwise comparisons, Bonferroni)", len(r.Parts))
	}
	switch {
	case !r.Provisional:
	case r.Estimate.N == 1 && !math.IsNaN(r.Estimate.Lo):
		v += " (" + fromSpread + ")"
	case r.Estimate.N == 1:
		v += " (one run, no interval)"
	default:
		v += fmt.Sprintf(" (provisional: %d runs, fewer than %d)", r.Estimate.N, ProvisionalBelow)
	}
	return v
}
