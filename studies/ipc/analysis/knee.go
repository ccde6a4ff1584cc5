package ipc

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
)

// A style holds an arrival rate when its p99, from the intended send
// times, stays under a second (a product page nobody waits longer for)
// and at least 99% of the arrivals are answered with a page.
const (
	kneeP99Ms   = 1000
	kneeSuccess = 0.99
)

// ratePoint is one open-model step of one repetition.
type ratePoint struct {
	rate, p99, success float64
}

func (p ratePoint) holds() bool { return p.p99 < kneeP99Ms && p.success >= kneeSuccess }

func pointOf(l level, u *analysis.Unit) ratePoint {
	s := u.Summary
	// Arrivals never sent count against the rate: the generator could not
	// place them because every connection was held by a slow answer.
	return ratePoint{rate: l.x, p99: s.Latency.P99, success: float64(s.Successes) / float64(max(s.Requests+s.Unsent, 1))}
}

// knee is the highest rate of an ascending sweep below the first one that
// did not hold: the style's capacity lies between it and the next rate.
// When every rate held it is beyond the sweep (at least the highest), and
// when the lowest failed, below it.
func knee(points []ratePoint) (bounded, bool) {
	for i, p := range points {
		if p.holds() {
			continue
		}
		if i == 0 {
			return bounded{p.rate, atMost}, true
		}
		return bounded{points[i-1].rate, exact}, true
	}
	if len(points) == 0 {
		return bounded{}, false
	}
	return bounded{points[len(points)-1].rate, atLeast}, true
}

// kneeWords says a knee with what bounds it.
func kneeWords(b bounded) string {
	switch b.dir {
	case atLeast:
		return fmt.Sprintf("≥ %s (beyond the sweep)", analysis.Num(b.v, 0))
	case atMost:
		return fmt.Sprintf("< %s (below the sweep)", analysis.Num(b.v, 0))
	}
	return analysis.Num(b.v, 0)
}

// kneeRuns is the knee of a style at a delay, by repetition, over the
// rates that repetition measured.
func (r *ipcRun) kneeRuns(style, delay string) map[int]bounded {
	points := map[int][]ratePoint{}
	for _, l := range r.open {
		for _, u := range r.ds.Units(r.key(style, delay), l.step.Name) {
			points[u.Rep] = append(points[u.Rep], pointOf(l, u))
		}
	}
	out := map[int]bounded{}
	for rep, ps := range points {
		if k, ok := knee(ps); ok {
			out[rep] = k
		}
	}
	return out
}

func (r *ipcRun) kneeSection() (analysis.Section, error) {
	var rates []string
	for _, l := range r.open {
		rates = append(rates, analysis.Num(l.x, 0))
	}
	measured := ""
	if len(rates) > 0 {
		measured = " (" + strings.Join(rates, ", ") + " requests per second)"
	}
	sec := analysis.Section{
		Title: "Knee of the open-model sweep",
		Text: []string{
			fmt.Sprintf("msbench adds what a closed model hides: a fixed arrival rate%s, latency measured from each request's intended send time, so that a server falling behind shows in the percentiles. "+
				"A rate holds when its p99 is under %s ms and at least %s of the arrivals (sent or not) were answered with a product page. The knee is the highest rate below the first that did not hold, per repetition: the capacity lies between it and the next rate of the sweep. "+
				"Beyond the sweep means every rate measured held, below the sweep that the lowest did not.",
				measured, analysis.Num(kneeP99Ms, 0), analysis.Pct(kneeSuccess)),
			r.notMeasured(openSteps),
		},
	}
	points := analysis.Table{
		Caption: "Per variant and rate: medians over repetitions.",
		Header:  []string{"variant", "rate req/s", "reps", "achieved req/s", "answered %", "p50 ms", "p99 ms", "holds in"},
	}
	knees := analysis.Table{Caption: "The knee per repetition, requests per second.", Header: []string{"variant", "knee"}}
	for _, delay := range r.delays {
		for _, style := range styles {
			k := r.key(style, delay)
			for _, l := range r.open {
				units := r.ds.Units(k, l.step.Name)
				if len(units) == 0 {
					continue
				}
				med := func(f func(p ratePoint, u *analysis.Unit) float64) float64 {
					m, _ := r.ds.Median(k, l.step.Name, func(u *analysis.Unit) float64 { return f(pointOf(l, u), u) })
					return m
				}
				held := 0
				for _, u := range units {
					if pointOf(l, u).holds() {
						held++
					}
				}
				points.Rows = append(points.Rows, []string{k, analysis.Num(l.x, 0), strconv.Itoa(len(units)),
					analysis.Num(med(func(_ ratePoint, u *analysis.Unit) float64 { return u.Summary.AchievedRPS }), 1),
					analysis.Num(med(func(p ratePoint, _ *analysis.Unit) float64 { return 100 * p.success }), 2),
					analysis.Num(med(func(_ ratePoint, u *analysis.Unit) float64 { return summarymetric.P50.Of(u.Summary) }), 1),
					analysis.Num(med(func(p ratePoint, _ *analysis.Unit) float64 { return p.p99 }), 1),
					fmt.Sprintf("%d of %d", held, len(units))})
			}
			runs := r.kneeRuns(style, delay)
			var words []string
			for _, rep := range slices.Sorted(maps.Keys(runs)) {
				words = append(words, kneeWords(runs[rep]))
			}
			if len(words) > 0 {
				knees.Rows = append(knees.Rows, []string{k, strings.Join(words, "; ")})
			}
		}
	}
	sec.Tables = append(sec.Tables, knees, points)
	var series []plot.XYSeries
	bound := plot.XYSeries{Name: "p99 bound", Dashed: true}
	for _, l := range r.open {
		bound.X, bound.Y = append(bound.X, l.x), append(bound.Y, kneeP99Ms)
	}
	for _, style := range styles {
		s := plot.XYSeries{Name: style, Points: true}
		for _, l := range r.open {
			if y, ok := r.ds.Median(r.key(style, r.base), l.step.Name, analysis.Of(summarymetric.P99)); ok && y > 0 {
				s.X, s.Y = append(s.X, l.x), append(s.Y, y)
			}
		}
		series = append(series, s)
	}
	if len(r.open) > 0 {
		svg, err := plot.Lines("p99 against the arrival rate", "arrival rate, requests per second", "p99 latency, ms (log)", append(series, bound), plot.Options{LogY: true})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: fmt.Sprintf("p99 from the intended send time against the rate, per style at %s (medians over repetitions); dashed: the %s ms bound of the knee.", r.base, analysis.Num(kneeP99Ms, 0)), SVG: svg})
	}
	return sec, nil
}
