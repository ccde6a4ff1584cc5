package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
)

// Precision is how narrow the intervals a run's verdicts read are, against
// a target width: what msbench run --target-width adds repetitions until.
// The intervals are the claims' (every part of a conjunction), or, for a
// study without claims, the comparison's cells, each at the level its
// verdict reads it (Bonferroni where the verdict is one of a family).
//
// A width is relative. For a ratio it is hi/lo − 1: its interval is
// symmetric on the log scale, so hi/lo is its full width wherever the
// ratio lies, and 1.00–1.10 is 10% wide. For any other value (a share, a
// difference, a time) it is (hi − lo) over the larger of the estimate and
// the claim's smallest non-zero edge: a share of lost requests near 0
// judged against "below 0.001" is narrow when its interval is small
// beside 0.001, which a width over the estimate alone would never be.
// A claim that has no interval although its metric was measured (every
// step it reads failed its audit, one run without an A/A model) is never
// narrow enough.
type Precision struct {
	Target    float64
	Intervals int // how many the verdicts read
	// Wider counts those wider than Target, or with no interval at all.
	Wider int
	// Widest is the widest relative width, +Inf when an interval could
	// not be computed; What names it (a claim, or a cell of the
	// comparison) and, without an interval, says why.
	Widest float64
	What   string
	// Unmeasured are the claims whose metric this run's steps measure
	// nowhere (a profile that skips them): no repetition of the same
	// steps would give them an interval, so they are left out.
	Unmeasured []string
}

// Narrow reports whether every interval is within the target.
func (p Precision) Narrow() bool { return p.Wider == 0 }

// String says the precision in words, for the log and the reason a run
// stopped.
func (p Precision) String() string {
	var s string
	switch {
	case p.Intervals == 0:
		s = "no claim or comparison reads an interval"
	case p.Narrow():
		s = fmt.Sprintf("every one of the %d intervals the verdicts read is within %s (the widest %s, %s)", p.Intervals, widthText(p.Target), widthText(p.Widest), p.What)
	default:
		s = fmt.Sprintf("%d of the %d intervals the verdicts read are wider than %s (the widest %s, %s)", p.Wider, p.Intervals, widthText(p.Target), widthText(p.Widest), p.What)
	}
	if len(p.Unmeasured) > 0 {
		s += fmt.Sprintf("; left out, as this run's steps do not measure them: %s", strings.Join(p.Unmeasured, ", "))
	}
	return s
}

// Measure is the precision of the run in ds against target, a relative
// width such as 0.1, on the report's own verdicts (judged as a report
// with opts would judge them).
func Measure(ds *analysis.Dataset, target float64, opts Options) Precision {
	p := Precision{Target: target}
	add := func(what string, e claims.Estimate, ratio bool, expect *claims.Expect, noInterval string, limit float64) {
		w, why := relativeWidth(e, ratio, expect)
		if why != "" {
			if noInterval != "" {
				why = noInterval
			}
			what += ": no interval, " + why
		}
		p.Intervals++
		if !(w <= limit) {
			p.Wider++
		}
		if p.Intervals == 1 || w > p.Widest {
			p.Widest, p.What = w, what
		}
	}
	if j := judge(ds, opts); j.claims != nil && len(j.claims.Claims) > 0 {
		for _, r := range j.claims.Claims {
			m, what := j.metrics[r.Claim.Metric], "claim "+r.Claim.ID
			limit := target
			if r.Claim.TargetWidth > 0 {
				limit = r.Claim.TargetWidth
			}
			switch {
			case !j.res.Metrics[r.Claim.Metric].Measured():
				p.Unmeasured = append(p.Unmeasured, r.Claim.ID)
			case !m.Measured():
				add(what, claims.Estimate{}, false, nil, r.Why, limit)
			case len(r.Parts) > 0:
				for _, part := range r.Parts {
					add(what+", "+part.Label, part.Estimate, m.Ratio, &r.Claim.Expect, "", limit)
				}
			default:
				add(what, r.Estimate, m.Ratio, &r.Claim.Expect, "", limit)
			}
		}
		return p
	}
	c := compareVariants(ds, opts)
	for _, cell := range c.Cells {
		add(fmt.Sprintf("step %s, %s / %s, %s", cell.Step, cell.Variant, c.Baseline, cell.Figure.words), cell.Estimate, true, nil, cell.Why, target)
	}
	return p
}

// relativeWidth is an interval's width relative to its scale (see
// Precision), or +Inf and why there is no interval to measure.
func relativeWidth(e claims.Estimate, ratio bool, expect *claims.Expect) (float64, string) {
	inf := math.Inf(1)
	switch {
	case e.N == 0:
		return inf, "not measured"
	case math.IsNaN(e.Lo) || math.IsNaN(e.Hi):
		return inf, "one run and no A/A noise model for it"
	case ratio && e.Lo > 0:
		return e.Hi/e.Lo - 1, ""
	}
	scale := math.Abs(e.Value)
	if expect != nil {
		if edge := smallestEdge(*expect); edge > scale {
			scale = edge
		}
	}
	switch {
	case e.Hi == e.Lo:
		return 0, ""
	case scale == 0:
		return inf, "its estimate is 0 and the claim has no edge but 0 to measure its width against"
	}
	return (e.Hi - e.Lo) / scale, ""
}

// smallestEdge is the smallest non-zero size of an edge of the claim's
// region, 0 when every edge is 0 or none is finite.
func smallestEdge(e claims.Expect) float64 {
	var edges []float64
	for _, p := range []*float64{e.Above, e.Below} {
		if p != nil {
			edges = append(edges, *p)
		}
	}
	edges = append(edges, e.Within...)
	if e.Near != nil {
		edges = append(edges, *e.Near*(1-e.Margin), *e.Near*(1+e.Margin))
	}
	smallest := 0.0
	for _, x := range edges {
		if x = math.Abs(x); x > 0 && (smallest == 0 || x < smallest) {
			smallest = x
		}
	}
	return smallest
}

// widthText is a relative width as a percentage.
func widthText(w float64) string {
	if math.IsInf(w, 1) {
		return "unbounded"
	}
	return fmt.Sprintf("%.1f%%", 100*w)
}

// stoppedText says when and why a run stopped adding repetitions.
func stoppedText(ds *analysis.Dataset) string {
	return fmt.Sprintf("The run went on adding repetitions while an interval its verdicts read was wider than asked (msbench run --target-width); it stopped after %d: %s.", ds.Study.Repetitions, ds.Prov.Stopped)
}
