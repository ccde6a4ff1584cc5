package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
)

// The comparison section answers the question every study asks, whether
// it has an analysis or not: is a variant faster or slower than the
// baseline? Its statistics are the claims' (claims.Summarise): a ratio
// paired within a repetition, its interval over repetitions, the A/A
// noise model for a run of one. What it adds is the multiplicity: the
// table holds many cells, and a verdict in any of them is read as an
// answer, so the intervals hold together at claims.Level (Bonferroni)
// rather than each on its own.

// comparedFigure is a figure the comparison sets each variant against the
// baseline on: how to read it from a unit (kindFigure, whose kind keys the
// comparison's own noise model and whose words head its column), which
// way it moves when a system gets worse, and the words for either way.
type comparedFigure struct {
	kindFigure
	worse    summarymetric.Direction
	verdicts summarymetric.Verdicts
}

func summaryFigure(d summarymetric.Descriptor, kind claims.Kind) comparedFigure {
	return comparedFigure{kindFigure{kind, d.Name, analysis.Of(d)}, d.Worse, d.Verdicts}
}

// comparedFigures are the section's columns. CPU per request takes the
// CPU kind's place in the comparison's noise model, which is estimated on
// CPU per request itself (comparisonNoise), not on the report's CPU time.
var comparedFigures = []comparedFigure{
	summaryFigure(summarymetric.P50, claims.Latency),
	summaryFigure(summarymetric.P99, claims.Tail),
	summaryFigure(summarymetric.Throughput, claims.Throughput),
	{kindFigure{claims.CPU, "CPU per request", cpuPerRequest}, summarymetric.Up, summarymetric.Verdicts{Better: "cheaper", Worse: "costlier"}},
}

// cpuPerRequest is the services' CPU seconds over the step per request
// sent; +Inf or NaN for a step that sent none, which no ratio can use.
func cpuPerRequest(u *analysis.Unit) float64 {
	return cpuSeconds(u) / float64(u.Summary.Requests)
}

// The verdicts besides a figure's own words (faster, costlier, ...).
const (
	sameVerdict    = "same"
	unknownVerdict = "unknown"
)

// comparison is every variant set against the baseline, per step and
// figure: what the section shows and the calibration tests judge.
type comparison struct {
	Baseline string
	Variants []string // compared with the baseline, in the matrix's order
	Cells    []comparisonCell
	// Family is the number of cells with an interval, and Level the
	// level of each (Bonferroni: 1 − (1 − claims.Level)/Family), so that
	// all hold together at claims.Level.
	Family int
	Level  float64
	// Noise is, per figure's kind, the A/A spread a cell measured in one
	// repetition takes its interval from; NoNoise says why it is empty.
	Noise   claims.Noise
	NoNoise string
	// Left lists, in words, every repetition of a cell that could not be
	// paired and why: nothing is left out silently.
	Left []string
}

// comparisonCell is one variant against the baseline in one step, for
// one figure.
type comparisonCell struct {
	Step, Variant string
	Figure        comparedFigure
	// Ratios are the variant's figure over the baseline's, one per
	// repetition in which both passed their noise audit.
	Ratios   []float64
	Estimate claims.Estimate
	Verdict  string
	// Why says why a verdict is unknown.
	Why string
}

// compareVariants sets every variant but the baseline (and the A/A twin,
// which is the noise model's) against the baseline; units that failed
// their noise audit are left out unless opts keeps them, as for claims.
func compareVariants(ds *analysis.Dataset, opts Options) comparison {
	c := comparison{Baseline: ds.Study.BaselineKey()}
	leftOut := func(u *analysis.Unit) string { return unpairable(u, opts.KeepFailedAudits) }
	c.Noise, c.NoNoise = comparisonNoise(ds)
	for _, v := range ds.Variants {
		if v.Key() != c.Baseline {
			c.Variants = append(c.Variants, v.Key())
		}
	}
	for _, st := range ds.Study.Load.Steps {
		base := byRepetition(ds.Units(c.Baseline, st.Name))
		for rep := 1; rep <= ds.Study.Repetitions; rep++ {
			if why := leftOut(base[rep]); why != "" && len(c.Variants) > 0 {
				c.Left = append(c.Left, fmt.Sprintf("step %s, repetition %d: the baseline %s, so no variant is compared in it", st.Name, rep, why))
			}
		}
		for _, v := range c.Variants {
			units := byRepetition(ds.Units(v, st.Name))
			cells := make([]comparisonCell, len(comparedFigures))
			for i, f := range comparedFigures {
				cells[i] = comparisonCell{Step: st.Name, Variant: v, Figure: f}
			}
			for rep := 1; rep <= ds.Study.Repetitions; rep++ {
				b, u := base[rep], units[rep]
				if leftOut(b) != "" {
					continue // said once for the step
				}
				if why := leftOut(u); why != "" {
					c.Left = append(c.Left, fmt.Sprintf("step %s, variant %s, repetition %d: it %s", st.Name, v, rep, why))
					continue
				}
				for i, f := range comparedFigures {
					x, y := f.of(u), f.of(b)
					if !usable(x) || !usable(y) {
						c.Left = append(c.Left, fmt.Sprintf("step %s, variant %s, repetition %d: %s is %s here and %s in the baseline, no ratio", st.Name, v, rep, f.words, figureText(x), figureText(y)))
						continue
					}
					cells[i].Ratios = append(cells[i].Ratios, x/y)
				}
			}
			c.Cells = append(c.Cells, cells...)
		}
	}
	// The family is the cells that can decide: first which have an
	// interval at all, then every interval at the corrected level.
	for _, cell := range c.Cells {
		if e := cell.summarise(c.Noise, claims.Level); !math.IsNaN(e.Lo) {
			c.Family++
		}
	}
	c.Level = 1 - (1-claims.Level)/float64(max(c.Family, 1))
	for i := range c.Cells {
		cell := &c.Cells[i]
		cell.Estimate = cell.summarise(c.Noise, c.Level)
		cell.Verdict, cell.Why = cell.judge(c.NoNoise)
	}
	return c
}

// summarise is the cell's geometric mean ratio with its interval at level:
// over repetitions a t-interval on the logs (R − 1 degrees of freedom), of
// one repetition the A/A noise model's, as claims are summarised.
func (cell comparisonCell) summarise(noise claims.Noise, level float64) claims.Estimate {
	m := claims.Metric{PerRun: cell.Ratios, Ratio: true, Kind: cell.Figure.kind, Deployments: 2}
	return claims.Summarise(m, noise, level)
}

// uninformative is how wide an interval holding 1 may be and still say
// the same: one that cannot rule out twice or half either way says
// nothing of a difference (one repetition's A/A model with one degree of
// freedom, under the correction for many cells, spans 10^±200).
const uninformative = 4

// judge reads the cell's interval: better or worse when it lies wholly on
// one side of 1, the same when it holds 1 and is narrower than
// uninformative, unknown otherwise.
func (cell comparisonCell) judge(noNoise string) (verdict, why string) {
	e := cell.Estimate
	switch {
	case e.N == 0:
		return unknownVerdict, "no repetition gave a ratio (see Not compared)"
	case math.IsNaN(e.Lo):
		return unknownVerdict, "one repetition and no A/A noise model for " + cell.Figure.words + " (" + noNoise + "): one run's ratio lands either side of 1 by chance"
	case e.Lo <= 1 && 1 <= e.Hi && !(e.Hi <= uninformative*e.Lo):
		return unknownVerdict, "the interval cannot rule out half or twice either way: more repetitions narrow it"
	case e.Lo <= 1 && 1 <= e.Hi:
		return sameVerdict, ""
	case (e.Hi < 1) == (cell.Figure.worse == summarymetric.Up):
		return cell.Figure.verdicts.Better, ""
	}
	return cell.Figure.verdicts.Worse, ""
}

// comparisonNoise is, per compared figure, the run-to-run spread of one
// deployment's log value from the A/A pairs (both audited), grouped by
// repetition as the report's noise model groups them: for p50, p99 and
// throughput the same σ̂ as that model's. Empty, with the reason, when
// the run has no usable pair.
func comparisonNoise(ds *analysis.Dataset) (claims.Noise, string) {
	aa, ok := ds.AAPairs()
	if !ok {
		return nil, "the study deploys no A/A twin (aa: none)"
	}
	noise := claims.Noise{}
	reps := aa.Repetitions()
	for _, f := range comparedFigures {
		var groups [][][2]float64
		for _, rep := range reps {
			var g [][2]float64
			for _, p := range rep {
				if x, y, ok := f.pair(p); ok {
					g = append(g, [2]float64{x, y})
				}
			}
			if len(g) > 0 {
				groups = append(groups, g)
			}
		}
		if len(groups) > 0 {
			noise[f.kind] = stats.LogSpread(groups)
		}
	}
	if len(noise) == 0 {
		return nil, "the A/A twin has no step where both deployments passed their noise audit"
	}
	return noise, "the A/A twin measured none of it"
}

// unpairable says why a unit cannot be one side of a pair, "" when it can.
func unpairable(u *analysis.Unit, keepFailedAudits bool) string {
	switch {
	case u == nil:
		return "was not measured"
	case !u.AuditOK() && !keepFailedAudits:
		return "failed its noise audit (" + strings.Join(u.Audit.Reasons, "; ") + ")"
	}
	return ""
}

func byRepetition(units []*analysis.Unit) map[int]*analysis.Unit {
	out := map[int]*analysis.Unit{}
	for _, u := range units {
		out[u.Rep] = u
	}
	return out
}

// usable is a figure a ratio's logs can take.
func usable(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

func figureText(x float64) string {
	if math.IsNaN(x) {
		return "not a number"
	}
	return fmt.Sprintf("%.4g", x)
}

// comparisonSection is the comparison in words, a table and one chart per
// step (one per figure for sweeps, whose steps are many).
func comparisonSection(ds *analysis.Dataset, opts Options) analysis.Section {
	c := compareVariants(ds, opts)
	sec := analysis.Section{Title: "Variants compared with " + c.Baseline}
	if len(c.Variants) == 0 {
		sec.Text = append(sec.Text, "The study has one variant: there is nothing to compare it with.")
		return sec
	}
	var words []string
	for _, f := range comparedFigures {
		words = append(words, fmt.Sprintf("%s: %s or %s", f.words, f.verdicts.Better, f.verdicts.Worse))
	}
	sec.Text = append(sec.Text, answerText(c),
		fmt.Sprintf("Is a variant faster or slower than the baseline (%s)? Per step, each variant's figure over the baseline's, paired within a repetition (same repetition, same step, both passing their noise audit): median (p50) and tail (p99) latency, throughput, and CPU per request (user + system CPU seconds of every service over the step, divided by the requests sent). "+
			"The estimate is the geometric mean of the ratios over the n repetitions, with a t-interval on their logs (n − 1 degrees of freedom); with one repetition, the interval comes from the A/A noise model, ratio × exp(±t·σ̂·√2) with σ̂ from the twin's pairs for that very figure, and is provisional. The A/A twin is not compared here: it is the noise model's.", c.Baseline),
		"Verdict: the whole interval on one side of 1 ("+strings.Join(words, "; ")+"); same when the interval holds 1, which means the difference is smaller than this run can tell, not that there is none; unknown when there is no interval.")
	if c.Family > 0 {
		sec.Text = append(sec.Text, multiplicityText(c))
	}
	if opts.KeepFailedAudits {
		sec.Text = append(sec.Text, "Steps that failed their noise audit are compared too (--keep-failed-audits): their numbers measure the lab's contention as well as the systems.")
	}
	if len(c.Left) > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("%d comparisons of a step in a repetition could not be made, listed under Not compared; each cell uses the repetitions that could.", len(c.Left)))
		sec.Details = append(sec.Details, analysis.Details{Summary: "Not compared", Items: c.Left})
	}
	unknown := map[string]int{}
	for _, cell := range c.Cells {
		if cell.Why != "" {
			unknown[cell.Why]++
		}
	}
	for _, why := range slices.Sorted(maps.Keys(unknown)) {
		sec.Text = append(sec.Text, fmt.Sprintf("Unknown in %d cells: %s.", unknown[why], why))
	}
	sec.Tables = append(sec.Tables, comparisonTable(c))
	sec.Figures, sec.Text = comparisonFigures(ds, c, sec.Text)
	return sec
}

// answerText is the section's answer first, in a sentence: every cell
// the run decided, by variant, or that it decided none.
func answerText(c comparison) string {
	if c.Family == 0 {
		return "In short: nothing is decided, as no cell has an interval (see why below)."
	}
	var decided []string
	for _, cell := range c.Cells {
		if cell.Verdict != sameVerdict && cell.Verdict != unknownVerdict {
			decided = append(decided, fmt.Sprintf("%s is %s in %s, step %s (%s×)", cell.Variant, cell.Verdict, cell.Figure.words, cell.Step, ratioText(cell.Estimate.Value)))
		}
	}
	if len(decided) == 0 {
		return fmt.Sprintf("In short: no variant differs from %s by more than this run can tell.", c.Baseline)
	}
	return fmt.Sprintf("In short, against %s: %s; no other difference this run can tell.", c.Baseline, strings.Join(decided, "; "))
}

// multiplicityText says how many cells the correction is over, their n
// and the level of each interval.
func multiplicityText(c comparison) string {
	reps := map[int]int{}
	for _, cell := range c.Cells {
		if !math.IsNaN(cell.Estimate.Lo) {
			reps[cell.Estimate.N]++
		}
	}
	var ns []string
	for _, n := range slices.Sorted(maps.Keys(reps)) {
		ns = append(ns, fmt.Sprintf("n = %d in %d", n, reps[n]))
	}
	return fmt.Sprintf("The table has %d cells with an interval (%s). Each interval is at %s rather than 95%%, Bonferroni's correction over those %d, so that all hold together at 95%%: a run of identical systems shows a verdict other than same anywhere in this section at most 5%% of the time. The price is wider intervals than one cell alone would get.",
		c.Family, strings.Join(ns, ", "), pctLevel(c.Level), c.Family)
}

func pctLevel(level float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", 100*level), "0"), ".") + "%"
}

// comparisonTable is one row per step and variant, one column per
// figure: the ratio, its interval and the verdict.
func comparisonTable(c comparison) analysis.Table {
	interval := "no interval"
	if c.Family > 0 {
		interval = fmt.Sprintf("its interval at %s (all together at 95%%)", pctLevel(c.Level))
	}
	t := analysis.Table{
		Caption: fmt.Sprintf("Variant / %s, geometric mean over the repetitions paired (n), with %s and the verdict. Throughput above 1 is faster; latency and CPU per request below 1 are faster and cheaper.", c.Baseline, interval),
		Header:  []string{"step", "variant", "n"},
	}
	for _, f := range comparedFigures {
		t.Header = append(t.Header, f.words)
	}
	for row := range slices.Chunk(c.Cells, len(comparedFigures)) {
		n := 0
		for _, cell := range row {
			n = max(n, cell.Estimate.N)
		}
		cells := []string{row[0].Step, row[0].Variant, fmt.Sprint(n)}
		for _, cell := range row {
			cells = append(cells, cellText(cell, n))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// cellText is a cell's ratio, interval and verdict, with its n when fewer
// repetitions paired than in the rest of its row.
func cellText(cell comparisonCell, n int) string {
	e := cell.Estimate
	var parts []string
	if e.N > 0 {
		parts = append(parts, ratioText(e.Value))
	}
	if !math.IsNaN(e.Lo) {
		parts = append(parts, "("+ratioText(e.Lo)+"–"+ratioText(e.Hi)+")")
	}
	switch {
	case e.N == 0:
		parts = append(parts, cell.Verdict+": none paired")
	case math.IsNaN(e.Lo):
		parts = append(parts, cell.Verdict+": one run, no A/A model")
	default:
		parts = append(parts, cell.Verdict)
	}
	if e.N != n && e.N > 0 {
		parts = append(parts, fmt.Sprintf("(n = %d)", e.N))
	}
	return strings.Join(parts, " ")
}

// ratioText is a ratio to three decimals, or to two significant digits
// where those would say nothing (an interval from two repetitions may
// span 10⁻⁴ to 10⁹).
func ratioText(x float64) string {
	if x >= 0.01 && x < 1000 {
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.2g", x)
}

// comparisonFigures draws the ratios with their intervals and 1 marked:
// per step, or per figure over the steps when they are many.
func comparisonFigures(ds *analysis.Dataset, c comparison, text []string) ([]analysis.Figure, []string) {
	one := 1.0
	guide := window(c.Cells)
	guide.Ref = &one
	logY := guide.Hi/guide.Lo > 4
	caption := fmt.Sprintf("Each variant's ratio to %s with its interval (%s each, 95%% together); the dashed line is 1, no difference. Latency and CPU per request below it are faster and cheaper, throughput above it faster. A point without a whisker has no interval; a whisker without a cap goes on past the chart (the table gives it whole).", c.Baseline, pctLevel(c.Level))
	var figures []analysis.Figure
	draw := func(title string, categories []string, series []plot.Series) {
		if !slices.ContainsFunc(series, func(s plot.Series) bool { return slices.ContainsFunc(s.Values, usable) }) {
			return // an empty chart would only repeat the table's "none paired"
		}
		svg, err := plot.Dots(title, "ratio to "+c.Baseline, categories, series, guide, plot.Options{LogY: logY})
		if err != nil {
			text = append(text, "Ratio plot unavailable: "+err.Error())
			return
		}
		figures = append(figures, analysis.Figure{Caption: caption, SVG: svg})
	}
	cell := map[[3]string]comparisonCell{}
	for _, x := range c.Cells {
		cell[[3]string{x.Step, x.Variant, x.Figure.words}] = x
	}
	series := func(categories []string, key func(category, variant string) [3]string) []plot.Series {
		out := make([]plot.Series, len(c.Variants))
		for k, v := range c.Variants {
			out[k] = plot.Series{Name: v}
			for _, cat := range categories {
				e := cell[key(cat, v)].Estimate
				out[k].Values = append(out[k].Values, e.Value)
				out[k].Low, out[k].High = append(out[k].Low, e.Lo), append(out[k].High, e.Hi)
			}
		}
		return out
	}
	var names []string
	for _, f := range comparedFigures {
		names = append(names, f.words)
	}
	if len(ds.Study.Load.Steps) <= manySteps {
		for _, st := range ds.Study.Load.Steps {
			draw(st.Name+": ratio to "+c.Baseline, names, series(names, func(fig, v string) [3]string { return [3]string{st.Name, v, fig} }))
		}
		return figures, text
	}
	var steps []string
	for _, st := range ds.Study.Load.Steps {
		steps = append(steps, st.Name)
	}
	for _, fig := range names {
		draw(fig+": ratio to "+c.Baseline, steps, series(steps, func(step, v string) [3]string { return [3]string{step, v, fig} }))
	}
	return figures, text
}

// window is how far the charts draw the intervals: from half the lowest
// ratio to twice the highest, and at least 0.5 to 2, cut to what the
// intervals reach. An interval from two repetitions can span 10⁻⁴ to 10⁹;
// drawn whole it would flatten every other, so it is cut at the edge.
// Past 4× from end to end, the charts take a log axis, which keeps 0.5
// and 2 equally far from 1.
func window(cells []comparisonCell) plot.Guide {
	lo, hi := 0.5, 2.0
	reachLo, reachHi := 1.0, 1.0
	for _, cell := range cells {
		e := cell.Estimate
		if usable(e.Value) {
			lo, hi = min(lo, e.Value/2), max(hi, 2*e.Value)
			reachLo, reachHi = min(reachLo, e.Value), max(reachHi, e.Value)
		}
		if usable(e.Lo) && usable(e.Hi) {
			reachLo, reachHi = min(reachLo, e.Lo), max(reachHi, e.Hi)
		}
	}
	return plot.Guide{Lo: max(lo, reachLo), Hi: min(hi, reachHi)}
}
