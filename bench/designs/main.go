// Command designs compares measurement designs of one study (interleaved
// against sequential, more or fewer slices, ...) by how narrow their
// intervals would be at equal machine time, from runs made with each:
//
//	go run ./bench/designs interleaved=results/A,results/B sequential=results/C,results/D
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
package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
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
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: designs [-budget D] [-v] NAME=DIR[,DIR...] NAME=DIR[,DIR...]")
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
	if *budget == 0 {
		*budget = ds[0].runTime()
	}
	print(os.Stdout, ds[0], ds[1], *budget, *verbose)
}

// design is the runs of one design, and per quantity the pooled spread of
// a repetition's log value.
type design struct {
	name  string
	runs  []run
	cells map[string]*pool
	// whole are the quantities of steps this design measured in one
	// piece: where both designs did, they measure alike and are left out.
	whole map[string]bool
}

type run struct {
	dir         string
	repetitions int
	took        time.Duration
}

// pool accumulates each run's sum of squared deviations of the log
// values from that run's mean, and its degrees of freedom.
type pool struct {
	ss float64
	df int
}

func (p *pool) add(values []float64) {
	if len(values) < 2 {
		return
	}
	logs := make([]float64, len(values))
	var mean float64
	for i, v := range values {
		logs[i] = math.Log(v)
		mean += logs[i]
	}
	mean /= float64(len(logs))
	for _, l := range logs {
		p.ss += (l - mean) * (l - mean)
	}
	p.df += len(logs) - 1
}

// sd is the pooled standard deviation of a repetition's log value.
func (p *pool) sd() float64 { return math.Sqrt(p.ss / float64(p.df)) }

func load(name string, dirs []string) (*design, error) {
	d := &design{name: name, cells: map[string]*pool{}, whole: map[string]bool{}}
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
		d.runs = append(d.runs, run{dir, ds.Study.Repetitions, prov.EndedAt.Sub(prov.StartedAt)})
		values, whole, err := perRepetition(ds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		maps.Copy(d.whole, whole)
		for k, v := range values {
			if d.cells[k] == nil {
				d.cells[k] = &pool{}
			}
			d.cells[k].add(v)
		}
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

// perRepetition is the design's median machine time per repetition.
func (d *design) perRepetition() time.Duration {
	each := make([]time.Duration, len(d.runs))
	for i, r := range d.runs {
		each[i] = r.took / time.Duration(r.repetitions)
	}
	slices.Sort(each)
	return each[len(each)/2]
}

// repetitions is how many repetitions budget pays for: at least 2, for
// an interval over repetitions to exist.
func (d *design) repetitions(budget time.Duration) float64 {
	return max(2, float64(budget)/float64(d.perRepetition()))
}

// width is the relative width (hi/lo − 1) of a 95% interval over r
// repetitions whose log values spread by sd.
func width(sd, r float64) float64 {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r - 1}.Quantile(0.975)
	return math.Exp(2*t*sd/math.Sqrt(r)) - 1
}

func print(w *os.File, a, b *design, budget time.Duration, verbose bool) {
	fmt.Fprintf(w, "budget %v of machine time per comparison\n\n", budget.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\truns\trepetitions\tmachine time per repetition\trepetitions in the budget")
	for _, d := range []*design{a, b} {
		reps := 0
		for _, r := range d.runs {
			reps += r.repetitions
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%.1f\n", d.name, len(d.runs), reps, d.perRepetition().Round(100*time.Millisecond), d.repetitions(budget))
	}
	tw.Flush()

	var keys []string
	alike := 0
	for k, p := range a.cells {
		switch q := b.cells[k]; {
		case q == nil || p.df == 0 || q.df == 0:
		case a.whole[k] && b.whole[k]:
			alike++
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	ra, rb := a.repetitions(budget), b.repetitions(budget)
	byKind := map[string][][3]float64{} // sd ratio, width a, width b
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if verbose {
		fmt.Fprintf(tw, "quantity\tsd %s (df)\tsd %s (df)\twidth %s\twidth %s\tratio\n", a.name, b.name, a.name, b.name)
	}
	for _, k := range keys {
		p, q := a.cells[k], b.cells[k]
		wa, wb := width(p.sd(), ra), width(q.sd(), rb)
		kind, _, _ := strings.Cut(k, " ")
		byKind[kind] = append(byKind[kind], [3]float64{p.sd() / q.sd(), wa, wb})
		if verbose {
			fmt.Fprintf(tw, "%s\t%.4f (%d)\t%.4f (%d)\t%.1f%%\t%.1f%%\t%.2f\n", k, p.sd(), p.df, q.sd(), q.df, 100*wa, 100*wb, wa/wb)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nmedians over the quantities both designs measured, but for %d of steps both measured in one piece (widths of 95%% intervals within the budget):\n", alike)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\tquantities\tsd %s / %s\twidth %s\twidth %s\twidth %s / %s\n", a.name, b.name, a.name, b.name, a.name, b.name)
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		rows := byKind[kind]
		col := func(i int) float64 {
			xs := make([]float64, len(rows))
			for j, r := range rows {
				xs[j] = r[i]
			}
			return stats.Median(xs)
		}
		ratios := make([]float64, len(rows))
		for j, r := range rows {
			ratios[j] = r[1] / r[2]
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f%%\t%.1f%%\t%.2f\n", kind, len(rows), col(0), 100*col(1), 100*col(2), stats.Median(ratios))
	}
	tw.Flush()
}
