package compare

import (
	"fmt"
	"slices"

	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"
)

// MethodPaired: both sides measured in one run, deployed side by side in
// every repetition with their slices interleaved (msbench ab): one
// NEW/BASE ratio per repetition from the two deployments' summaries (for
// errors, one difference), and the interval a t-interval on their logs
// (on the differences), R − 1 degrees of freedom. The repetition is the
// unit: it holds one deployment of each side, and what drifts between
// repetitions falls on both.
const MethodPaired = "paired"

// Pair is a variant measured twice in one run, once per side.
type Pair struct {
	Label     string // the variant as its study names it, e.g. nethttp-pooled-0ms
	Base, New string // its two keys in the run
}

// Paired compares, within the run directory run, each pair's New variant
// with its Base, step by step, over the repetitions that measured both.
// base and new say what each side was built from. A step a side did not
// measure is a note, not a comparison; no comparison at all is a
// UsageError.
func Paired(run *Source, pairs []Pair, base, new string, opt Options) (*Report, error) {
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	cells := map[[2]string]*Cell{}
	var steps []string // in the run's order
	for _, c := range run.Cells {
		if !slices.Contains(steps, c.Step) {
			steps = append(steps, c.Step)
		}
		cells[[2]string{c.Step, c.Variant}] = c
	}
	r := &Report{
		Base:   Side{Dir: run.Dir, Kind: run.Kind, Source: base, Notes: run.Notes},
		New:    Side{Dir: run.Dir, Kind: run.Kind, Source: new},
		Level:  opt.Level,
		FailIf: []RuleResult{},
	}
	for _, step := range steps {
		for _, p := range pairs {
			b, n := cells[[2]string{step, p.Base}], cells[[2]string{step, p.New}]
			switch {
			case b != nil && n != nil:
				r.Comparisons = append(r.Comparisons, comparePaired(step, p.Label, b, n, opt.Level))
			case b != nil:
				r.Notes = append(r.Notes, fmt.Sprintf("step %s of %s: BASE measured it and NEW did not, so it is not compared", step, p.Label))
			case n != nil:
				r.Notes = append(r.Notes, fmt.Sprintf("step %s of %s: NEW measured it and BASE did not, so it is not compared", step, p.Label))
			default:
				r.Notes = append(r.Notes, fmt.Sprintf("step %s of %s: neither side measured it", step, p.Label))
			}
		}
	}
	if len(r.Comparisons) == 0 {
		return nil, usagef("%s: no step measured both sides (%s)", run.Dir, cellList(run))
	}
	return r, nil
}

// comparePaired compares the units of b and n that share a repetition.
func comparePaired(step, label string, b, n *Cell, level float64) Comparison {
	byRep := map[int]Unit{}
	for _, u := range b.Units {
		byRep[u.Rep] = u
	}
	p := pair{&Cell{Step: step, Variant: b.Variant}, &Cell{Step: step, Variant: n.Variant}}
	for _, u := range n.Units {
		if bu, ok := byRep[u.Rep]; ok {
			p.base.Units, p.new.Units = append(p.base.Units, bu), append(p.new.Units, u)
		}
	}
	c := p.comparison()
	c.Variant, c.NewVariant, c.Method = label, label, MethodPaired
	c.MethodDetail = fmt.Sprintf("%d repetitions, each deploying both sides at once and interleaving their slices; one NEW/BASE ratio per repetition from the two summaries, their geometric mean with a t-interval on the logs (%d degrees of freedom); errors by the mean of the per-repetition differences",
		c.BaseRuns, max(c.BaseRuns-1, 0))
	if unpaired := len(b.Units) + len(n.Units) - 2*c.BaseRuns; unpaired > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d unit%s measured on one side only (the other's repetition failed) left out", unpaired, plural(unpaired)))
	}
	fromRuns(&c, p, level, func(d summarymetric.Descriptor, b, n []float64, level float64) (est, lo, hi float64) {
		if d.Change == summarymetric.Ratio {
			est, lo, hi, _ = stats.PairedRunRatio(b, n, level)
		} else {
			est, lo, hi, _ = stats.PairedRunDiff(b, n, level)
		}
		return est, lo, hi
	})
	return c
}
