// Command designs compares measurement designs of one study (interleaved
// against sequential, more or fewer slices, ...) by how narrow their
// intervals would be at equal machine time, from runs made with each:
//
//	go run ./bench/designs [-paired] interleaved=results/A,results/B sequential=results/C,results/D
//
// One run's interval widths vary two- to four-fold from run to run with
// three to five deployments, so setting one run of each design side by
// side cannot tell designs apart. What a design fixes is the spread of a
// repetition's value (a claim's ratio, the A/A twin's ratio, a variant
// against the baseline) and the machine time a repetition costs; the
// interval over R repetitions is then 2·t(R−1)·s/√R wide on the log
// scale. So for every such quantity it pools the variance of the
// per-repetition log values over all runs of a design (each run's own
// mean removed: runs differ in their seeds), takes the design's median
// machine time per repetition, and prints the width each design would
// give within the same budget (-budget, by default the first design's
// median run time), and their ratio. Only units that passed their noise
// audit count, as for verdicts.
//
// That ratio is itself an estimate from a handful of runs, and the
// machine's drift changes by the hour (one design's runs made hours
// apart spread 1.6–2× differently), so it comes with a 95% interval from
// resampling runs; with -paired (runs made alternately, the i-th of each
// design side by side) from resampling pairs, which keeps the hours out
// of the comparison.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"

	_ "github.com/msbench/msbench/studies/cache/analysis"
	_ "github.com/msbench/msbench/studies/faas-gateway/analysis"
	_ "github.com/msbench/msbench/studies/frameworks/analysis"
	_ "github.com/msbench/msbench/studies/ipc/analysis"
	_ "github.com/msbench/msbench/studies/thread-vs-fiber/analysis"
)

func main() {
	budget := flag.Duration("budget", 0, "machine time both designs get; 0: the first design's median run time")
	verbose := flag.Bool("v", false, "print every quantity, not only the medians")
	paired := flag.Bool("paired", false, "the i-th runs of the two designs were made next to each other (alternated in time): the interval resamples pairs")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: designs [-budget D] [-paired] [-v] NAME=DIR[,DIR...] NAME=DIR[,DIR...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	var ds [2]*design
	for i, arg := range flag.Args() {
		name, dirs, ok := strings.Cut(arg, "=")
		if !ok || dirs == "" {
			fmt.Fprintf(os.Stderr, "designs: %q is not NAME=DIR[,DIR...]\n", arg)
			os.Exit(2)
		}
		d, err := load(name, strings.Split(dirs, ","))
		if err != nil {
			fmt.Fprintln(os.Stderr, "designs:", err)
			os.Exit(1)
		}
		ds[i] = d
	}
	if *paired && len(ds[0].runs) != len(ds[1].runs) {
		fmt.Fprintf(os.Stderr, "designs: -paired needs as many runs of each design, in the order they were made; %s has %d, %s %d\n", ds[0].name, len(ds[0].runs), ds[1].name, len(ds[1].runs))
		os.Exit(2)
	}
	if *budget == 0 {
		*budget = ds[0].runTime()
	}
	print(os.Stdout, compare(ds[0], ds[1], *budget), *paired, *verbose)
}

// design is the runs of one design.
type design struct {
	name string
	runs []run
	// whole are the quantities of steps this design measured in one
	// piece: where both designs did, they measure alike and are left out.
	whole map[string]bool
}

// run is one run of a design, and per quantity the spread of its
// repetitions' log values.
type run struct {
	dir         string
	repetitions int
	took        time.Duration
	cells       map[string]pool
}

// pool accumulates the sum of squared deviations of log values from
// their run's mean, and its degrees of freedom, over one run or many.
type pool struct {
	ss float64
	df int
}

func spread(values []float64) pool {
	if len(values) < 2 {
		return pool{}
	}
	logs := make([]float64, len(values))
	var mean float64
	for i, v := range values {
		logs[i] = math.Log(v)
		mean += logs[i]
	}
	mean /= float64(len(logs))
	var p pool
	for _, l := range logs {
		p.ss += (l - mean) * (l - mean)
	}
	p.df = len(logs) - 1
	return p
}

func (p *pool) add(q pool) {
	p.ss += q.ss
	p.df += q.df
}

// sd is the pooled standard deviation of a repetition's log value.
func (p pool) sd() float64 { return math.Sqrt(p.ss / float64(p.df)) }

func load(name string, dirs []string) (*design, error) {
	d := &design{name: name, whole: map[string]bool{}}
	for _, dir := range dirs {
		all, err := analysis.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		prov := all.Prov
		if prov.EndedAt.IsZero() {
			return nil, fmt.Errorf("%s: the run did not end: its machine time is unknown", dir)
		}
		if len(prov.ResumedAt) > 0 {
			return nil, fmt.Errorf("%s: the run was resumed: its machine time is not one span", dir)
		}
		ds, _ := all.PassedAudits()
		values, whole, err := perRepetition(ds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		maps.Copy(d.whole, whole)
		r := run{dir, ds.Study.Repetitions, prov.EndedAt.Sub(prov.StartedAt), map[string]pool{}}
		for k, v := range values {
			r.cells[k] = spread(v)
		}
		d.runs = append(d.runs, r)
	}
	if len(d.runs) == 0 {
		return nil, errors.New(name + ": no run")
	}
	return d, nil
}

// perRepetition is every ratio a verdict of the run reads, one value per
// repetition: the claims' (the parts of a conjunction each), the A/A
// twin's over its base and each variant's over the baseline, per step,
// for p50, p99 and throughput; and which of these its steps measured in
// one piece.
func perRepetition(ds *analysis.Dataset) (values map[string][]float64, whole map[string]bool, err error) {
	out, whole := map[string][]float64{}, map[string]bool{}
	if a, ok := analysis.Lookup(ds.Study.Name); ok && ds.Claims != nil {
		res, err := a.Analyze(ds)
		if err != nil {
			return nil, nil, fmt.Errorf("the study's analysis: %w", err)
		}
		for _, c := range ds.Claims.Claims {
			m, ok := res.Metrics[c.Metric]
			if !ok || !m.Ratio {
				continue // a share or a difference: not a ratio's width
			}
			if m.All == nil {
				out["claim "+c.ID] = m.PerRun
			}
			for _, p := range m.All {
				out["claim "+c.ID+" ("+p.Label+")"] = p.PerRun
			}
		}
	}
	figures := []summarymetric.Descriptor{summarymetric.P50, summarymetric.P99, summarymetric.Throughput}
	pair := func(kind, a, b, step string) {
		units := ds.Units(a, step)
		for _, f := range figures {
			of := analysis.Of(f)
			key := kind + " " + step + " " + a + " " + f.Name
			out[key] = analysis.Paired(ds.PerRun(a, step, of), ds.PerRun(b, step, of), analysis.Ratio)
			whole[key] = len(units) > 0 && units[0].Slices == nil
		}
	}
	base := ds.Study.BaselineKey()
	twin, hasTwin := ds.Study.Twin()
	for _, st := range ds.Study.Load.Steps {
		if hasTwin {
			b := twin
			b.Twin = false
			pair("A/A", twin.Key(), b.Key(), st.Name)
		}
		for _, v := range ds.Variants {
			if k := v.Key(); k != base && !v.Twin {
				pair("comparison", k, base, st.Name)
			}
		}
	}
	return out, whole, nil
}

func (d *design) runTime() time.Duration {
	times := make([]time.Duration, len(d.runs))
	for i, r := range d.runs {
		times[i] = r.took
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// every picks each run once: the estimate's pick, where a bootstrap
// resample picks runs with repeats.
func (d *design) every() []int {
	picked := make([]int, len(d.runs))
	for i := range picked {
		picked[i] = i
	}
	return picked
}

// perRepetition is the median machine time per repetition of the runs
// picked.
func (d *design) perRepetition(picked []int) time.Duration {
	each := make([]time.Duration, len(picked))
	for j, i := range picked {
		each[j] = d.runs[i].took / time.Duration(d.runs[i].repetitions)
	}
	slices.Sort(each)
	return each[len(each)/2]
}

// repetitions is how many repetitions budget pays for: at least 2, for
// an interval over repetitions to exist.
func (d *design) repetitions(budget time.Duration, picked []int) float64 {
	return max(2, float64(budget)/float64(d.perRepetition(picked)))
}

// width is the relative width (hi/lo − 1) of a 95% interval over r
// repetitions whose log values spread by sd.
func width(sd, r float64) float64 { return widthT(sd, r, t975(r)) }

// t975 is the t quantile of a 95% interval over r repetitions, apart so
// that a bootstrap resample computes it once for all its quantities.
func t975(r float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r - 1}.Quantile(0.975)
}

func widthT(sd, r, t float64) float64 { return math.Exp(2*t*sd/math.Sqrt(r)) - 1 }

// comparison sets two designs' widths within one budget side by side.
type comparison struct {
	a, b   *design
	budget time.Duration
	// keys are the quantities both designs measured, but for those of
	// steps both measured in one piece (alike counts them); kinds are
	// their kinds (claim, comparison, A/A).
	keys, kinds []string
	alike       int
	// constant counts the quantities that never varied in either design
	// (a count that is the same every time): they say nothing of widths.
	constant int
	// spreads are, per design, run and key, the run's spread of the key,
	// in slices so that a bootstrap resample pools them without maps.
	spreads [2][][]pool
	// t975 remembers t quantiles by repetitions: a resample draws one of
	// few machine times per repetition, and the quantile is costly.
	t975 map[float64]float64
}

func compare(a, b *design, budget time.Duration) *comparison {
	c := &comparison{a: a, b: b, budget: budget, t975: map[float64]float64{}}
	every := map[string]bool{}
	for _, r := range a.runs {
		for k := range r.cells {
			every[k] = true
		}
	}
	c.keys = slices.Sorted(maps.Keys(every))
	c.fill()
	pa, pb := c.pooled(0, a.every()), c.pooled(1, b.every())
	var keys []string
	for i, k := range c.keys {
		switch p, q := pa[i], pb[i]; {
		case p.df == 0 || q.df == 0:
		case a.whole[k] && b.whole[k]:
			c.alike++
		case p.ss == 0 && q.ss == 0:
			c.constant++
		default:
			keys = append(keys, k)
		}
	}
	c.keys = keys
	c.fill()
	return c
}

// fill lays out every run's spreads and the kinds in the order of keys.
func (c *comparison) fill() {
	c.kinds = c.kinds[:0]
	for _, k := range c.keys {
		kind, _, _ := strings.Cut(k, " ")
		c.kinds = append(c.kinds, kind)
	}
	for d, dd := range []*design{c.a, c.b} {
		c.spreads[d] = nil
		for _, r := range dd.runs {
			row := make([]pool, len(c.keys))
			for i, k := range c.keys {
				row[i] = r.cells[k]
			}
			c.spreads[d] = append(c.spreads[d], row)
		}
	}
}

// pooled is each key's spread over the runs picked of design d.
func (c *comparison) pooled(d int, picked []int) []pool {
	sum := make([]pool, len(c.keys))
	for _, i := range picked {
		for k, p := range c.spreads[d][i] {
			sum[k].add(p)
		}
	}
	return sum
}

// cell is one quantity's spreads and widths within the budget.
type cell struct {
	key, kind      string
	a, b           pool
	widthA, widthB float64
}

// cells are the quantities' widths from the runs picked of each design;
// a quantity that no run picked measured twice is left out.
func (c *comparison) cells(pa, pb []int) []cell {
	sa, sb := c.pooled(0, pa), c.pooled(1, pb)
	ra, rb := c.a.repetitions(c.budget, pa), c.b.repetitions(c.budget, pb)
	ta, tb := c.t(ra), c.t(rb)
	var out []cell
	for i, k := range c.keys {
		p, q := sa[i], sb[i]
		if p.df == 0 || q.df == 0 || p.ss == 0 && q.ss == 0 {
			continue
		}
		out = append(out, cell{k, c.kinds[i], p, q, widthT(p.sd(), ra, ta), widthT(q.sd(), rb, tb)})
	}
	return out
}

// summary is one kind of quantity's medians over its quantities.
type summary struct {
	quantities              int
	sdRatio, widthA, widthB float64
	// ratio is the median over the quantities of width a / width b: the
	// figure the designs are compared by.
	ratio float64
}

func summarise(cells []cell) map[string]summary {
	byKind := map[string][]cell{}
	for _, c := range cells {
		byKind[c.kind] = append(byKind[c.kind], c)
	}
	out := map[string]summary{}
	for kind, cs := range byKind {
		median := func(f func(cell) float64) float64 {
			xs := make([]float64, len(cs))
			for i, c := range cs {
				xs[i] = f(c)
			}
			return stats.Median(xs)
		}
		out[kind] = summary{
			quantities: len(cs),
			sdRatio:    median(func(c cell) float64 { return c.a.sd() / c.b.sd() }),
			widthA:     median(func(c cell) float64 { return c.widthA }),
			widthB:     median(func(c cell) float64 { return c.widthB }),
			ratio:      median(func(c cell) float64 { return c.widthA / c.widthB }),
		}
	}
	return out
}

// intervals are each kind's 95% interval of its median width ratio, by
// resampling runs: the run is the unit, since a run's repetitions share
// its hour of the machine's drift, and a design compared by runs made
// hours apart compares those hours. When paired, the i-th runs of the
// two designs were made next to each other, and a resample draws pairs,
// so that what an hour did falls on both designs alike.
//
// An evening makes a handful of pairs, and a percentile interval from
// so few units is too narrow (87% coverage from 6 pairs in the tests), so
// it is the expanded percentile interval (Hesterberg 2015): the
// percentiles at ±√(n/(n−1))·t(n−1) standard normal deviates, for the n
// pairs (or the fewer runs of the two designs). A kind some resamples
// cannot compute (no quantity measured twice in the runs drawn) gets no
// interval when more than 1% of them could not.
func (c *comparison) intervals(paired bool, resamples int, seed uint64) map[string][2]float64 {
	n := min(len(c.a.runs), len(c.b.runs))
	out := map[string][2]float64{}
	if n < 2 {
		for _, kind := range c.kinds {
			out[kind] = [2]float64{math.NaN(), math.NaN()}
		}
		return out
	}
	nf := float64(n)
	z := math.Sqrt(nf/(nf-1)) * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nf - 1}.Quantile(0.975)
	level := 1 - 2*distuv.UnitNormal.CDF(-z)

	rng := rand.New(rand.NewPCG(seed, seed))
	draw := func(n int) []int {
		picked := make([]int, n)
		for i := range picked {
			picked[i] = rng.IntN(n)
		}
		return picked
	}
	ratios := map[string][]float64{}
	for range resamples {
		pa := draw(len(c.a.runs))
		pb := pa
		if !paired {
			pb = draw(len(c.b.runs))
		}
		for kind, s := range summarise(c.cells(pa, pb)) {
			ratios[kind] = append(ratios[kind], s.ratio)
		}
	}
	for _, kind := range c.kinds {
		rs := ratios[kind]
		if len(rs) < resamples*99/100 {
			out[kind] = [2]float64{math.NaN(), math.NaN()}
			continue
		}
		lo, hi := stats.PercentileInterval(rs, level)
		out[kind] = [2]float64{lo, hi}
	}
	return out
}

func (c *comparison) t(r float64) float64 {
	t, ok := c.t975[r]
	if !ok {
		t = t975(r)
		c.t975[r] = t
	}
	return t
}

func print(w io.Writer, c *comparison, paired bool, verbose bool) {
	a, b := c.a, c.b
	fmt.Fprintf(w, "budget %v of machine time per comparison\n\n", c.budget.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\truns\trepetitions\tmachine time per repetition\trepetitions in the budget")
	for _, d := range []*design{a, b} {
		reps := 0
		for _, r := range d.runs {
			reps += r.repetitions
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%.1f\n", d.name, len(d.runs), reps, d.perRepetition(d.every()).Round(100*time.Millisecond), d.repetitions(c.budget, d.every()))
	}
	tw.Flush()

	cells := c.cells(a.every(), b.every())
	if verbose {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "quantity\tsd %s (df)\tsd %s (df)\twidth %s\twidth %s\tratio\n", a.name, b.name, a.name, b.name)
		for _, q := range cells {
			fmt.Fprintf(tw, "%s\t%.4f (%d)\t%.4f (%d)\t%.1f%%\t%.1f%%\t%.2f\n", q.key, q.a.sd(), q.a.df, q.b.sd(), q.b.df, 100*q.widthA, 100*q.widthB, q.widthA/q.widthB)
		}
		tw.Flush()
	}
	unit := "runs of each design drawn apart"
	if paired {
		unit = "pairs of runs made side by side"
	}
	ci := c.intervals(paired, 10_000, 1)
	fmt.Fprintf(w, "\nmedians over the quantities both designs measured, but for %d of steps both measured in one piece and %d that never varied (widths of 95%% intervals within the budget; the ratio's 95%% interval from resampling %s):\n", c.alike, c.constant, unit)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\tquantities\tsd %s / %s\twidth %s\twidth %s\twidth %s / %s\t95%% interval\n", a.name, b.name, a.name, b.name, a.name, b.name)
	byKind := summarise(cells)
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		s := byKind[kind]
		iv := "unknown"
		if r := ci[kind]; !math.IsNaN(r[0]) {
			iv = fmt.Sprintf("%.2f–%.2f", r[0], r[1])
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f%%\t%.1f%%\t%.2f\t%s\n", kind, s.quantities, s.sdRatio, 100*s.widthA, 100*s.widthB, s.ratio, iv)
	}
	tw.Flush()
}
