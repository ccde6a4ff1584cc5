package ipc

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
)

// roundTripsPerPage is what one more millisecond of one-way delay should
// add to a page, in milliseconds, in every style: the five calls run at
// once, each crosses its link out and back (RabbitMQ: publish to the
// broker, reply from it), and the page waits for the slowest.
const roundTripsPerPage = 2

// difference compares two styles by how many ms each ms of one-way delay
// adds to their median: the first's minus the second's, per repetition.
func difference(xs []float64) (float64, bool) { return xs[0] - xs[1], true }

// p50 is a step's median response time.
var p50 = analysis.Of(summarymetric.P50)

// atSeveralDelays keeps the levels some style measured at two delays or
// more: only there can distance show.
func (r *ipcRun) atSeveralDelays(ls []level) []level {
	var out []level
	for _, l := range ls {
		for _, style := range styles {
			n := 0
			for _, d := range r.delays {
				if len(r.ds.Units(r.key(style, d), l.step.Name)) > 0 {
					n++
				}
			}
			if n >= 2 {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// addedRuns is, by repetition, the ms a style's p50 in an open step
// gained at delay over the smallest delay, in the same repetition.
func (r *ipcRun) addedRuns(style string, l level, delay string) map[int]float64 {
	added, _ := across(func(xs []float64) (float64, bool) { return xs[0] - xs[1], true },
		r.ds.PerRun(r.key(style, delay), l.step.Name, p50), r.ds.PerRun(r.key(style, r.base), l.step.Name, p50))
	return added
}

// costRuns is, by repetition, the ms a style's p50 gained per ms of
// one-way delay from the smallest delay to the farthest: what distance
// costs it, in the unit of the round trip it should cost
// (roundTripsPerPage).
func (r *ipcRun) costRuns(style string, l level) map[int]float64 {
	far := r.farthest()
	span := r.delayMs[far] - r.delayMs[r.base]
	out := map[int]float64{}
	for rep, added := range r.addedRuns(style, l, far) {
		out[rep] = added / span
	}
	return out
}

// farthest is the largest delay of the run.
func (r *ipcRun) farthest() string {
	far := r.base
	for _, d := range r.delays {
		if r.delayMs[d] > r.delayMs[far] {
			far = d
		}
	}
	return far
}

// costLevel is the open step the distance finding is judged on: the
// lowest rate measured at several delays, where queueing adds least to
// what the links add.
func (r *ipcRun) costLevel() (level, bool) {
	ls := r.atSeveralDelays(r.open)
	if len(ls) == 0 {
		return level{}, false
	}
	return ls[0], true
}

// delaySection shows how distance changes the picture: the ranking of the
// styles at each delay, closed and open; what each ms of delay adds to a
// page below the knee; and the curves against the delay.
func (r *ipcRun) delaySection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Throughput and latency against link delay",
		Text: []string{"Each link adds its delay one way, to both directions of every connection between the gateway and a service or the broker, so every call's round trip gains twice the delay (for RabbitMQ: the request published to the broker and the reply taken from it); a page makes its five calls at once and waits for the slowest. " +
			"Ranks come from each style's median over repetitions; a change of rank within the A/A noise (the noise model) is no change.",
			"In a saturated closed model a page waits seconds in queues and milliseconds of distance cannot show; under a fixed arrival rate below the knee they can, so the open steps measured at several delays are read for what distance costs each style. " +
				"The links themselves add twice their one-way delay to a round trip (the links package's own test measures that); a cost that jumps at the first delay and then stays flat is paid by something in the system that waits once there is any distance at all."},
	}
	if len(r.delays) < 2 {
		sec.Text = append(sec.Text, "This run measured one link delay ("+strings.Join(r.delays, ", ")+"): no curve to draw.")
		return sec, nil
	}
	closed := analysis.Table{
		Caption: "Closed model, per users and link delay: the styles from most to fewest requests per 180 s, and from fastest to slowest median response (medians over repetitions).",
		Header:  []string{"users", "link delay", "throughput, most first", "p50 ms, fastest first"},
	}
	for _, l := range r.atSeveralDelays(r.closed) {
		for _, delay := range r.delays {
			closed.Rows = append(closed.Rows, []string{analysis.Num(l.x, 0), delay, r.rank(l, delay, per180(l.step), -1, 0), r.rank(l, delay, p50, 1, 1)})
		}
	}
	open := analysis.Table{
		Caption: "Open model, per arrival rate and link delay: the styles from fastest to slowest median and p99 from the intended send time, and the share answered with a page (medians over repetitions).",
		Header:  []string{"rate req/s", "link delay", "p50 ms, fastest first", "p99 ms, fastest first", "answered %"},
	}
	for _, l := range r.atSeveralDelays(r.open) {
		answered := func(u *analysis.Unit) float64 { return 100 * pointOf(l, u).success }
		p99 := func(u *analysis.Unit) float64 { return pointOf(l, u).p99 }
		for _, delay := range r.delays {
			open.Rows = append(open.Rows, []string{analysis.Num(l.x, 0), delay, r.rank(l, delay, p50, 1, 1), r.rank(l, delay, p99, 1, 1), r.rank(l, delay, answered, -1, 2)})
		}
	}
	for _, t := range []analysis.Table{closed, open} {
		if len(t.Rows) > 0 {
			sec.Tables = append(sec.Tables, t)
		}
	}
	if cl, ok := r.costLevel(); ok {
		sec.Tables = append(sec.Tables, r.costTable(cl))
	} else {
		sec.Text = append(sec.Text, analysis.NotMeasured([]string{"an open-model step at more than one link delay, for what distance costs each style"}))
	}
	return sec, r.delayFigures(&sec)
}

// rank orders the styles at one level and delay by f's median over
// repetitions: better -1 puts the largest first, 1 the smallest.
func (r *ipcRun) rank(l level, delay string, f func(u *analysis.Unit) float64, better, digits int) string {
	type ranked struct {
		style string
		y     float64
	}
	var rs []ranked
	for _, style := range styles {
		if y, ok := r.ds.Median(r.key(style, delay), l.step.Name, f); ok {
			rs = append(rs, ranked{style, y})
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return better * cmp.Compare(a.y, b.y) })
	var out []string
	for _, x := range rs {
		out = append(out, x.style+" "+analysis.Num(x.y, digits))
	}
	sep := " > "
	if better > 0 {
		sep = " < "
	}
	return strings.Join(out, sep)
}

// costTable gives, per style, the ms of median each delay adds over the
// smallest at the open level cl, beside the round trips it should add:
// a cost that jumps at the first step and then stays says something other
// than distance is paid.
func (r *ipcRun) costTable(cl level) analysis.Table {
	header := []string{"style", "reps"}
	var far []string
	for _, d := range r.delays {
		if d != r.base {
			far = append(far, d)
			header = append(header, fmt.Sprintf("+ at %s (one round trip: %s)", d, analysis.Num(roundTripsPerPage*(r.delayMs[d]-r.delayMs[r.base]), 1)))
		}
	}
	t := analysis.Table{
		Caption: fmt.Sprintf("What distance costs at %s requests per second: the ms a style's p50 gained at each delay over its p50 at %s in the same repetition, median over repetitions with its 95%% interval (with fewer than 6, the mean with its own); then per ms of one-way delay to the farthest, per repetition. One round trip per page is %d ms per ms.", analysis.Num(cl.x, 0), r.base, roundTripsPerPage),
		Header:  append(header, "ms per ms to "+r.farthest()+", per repetition"),
	}
	for _, style := range styles {
		runs := r.costRuns(style, cl)
		row := []string{style, fmt.Sprint(len(runs))}
		for _, d := range far {
			row = append(row, analysis.WithCI(byRep(r.addedRuns(style, cl, d)), 1, stats.Unbounded))
		}
		var each []string
		for _, rep := range slices.Sorted(maps.Keys(runs)) {
			each = append(each, analysis.Num(runs[rep], 2))
		}
		if len(each) == 0 {
			each = []string{"not measured: no repetition has this step at " + r.base + " and " + r.farthest()}
		}
		t.Rows = append(t.Rows, append(row, strings.Join(each, ", ")))
	}
	return t
}

// delayFigures draws against the delay: the closed model's throughput and
// median at 100 users, and the open model's median at the level the
// finding is judged on.
func (r *ipcRun) delayFigures(sec *analysis.Section) error {
	type curve struct {
		title, y string
		step     string
		f        func(u *analysis.Unit) float64
	}
	var curves []curve
	if st := at(r.atSeveralDelays(r.closed), 100); st != nil {
		curves = append(curves,
			curve{"Throughput against link delay, 100 users", "requests answered 200 per 180 s", st.Name, per180(st)},
			curve{"Median latency against link delay, 100 users", "p50 latency, ms", st.Name, p50})
	}
	if cl, ok := r.costLevel(); ok {
		curves = append(curves, curve{fmt.Sprintf("Median latency against link delay, %s requests per second", analysis.Num(cl.x, 0)), "p50 latency from the intended send time, ms", cl.step.Name, p50})
	}
	for _, c := range curves {
		var series []plot.XYSeries
		for _, style := range styles {
			s := plot.XYSeries{Name: style, Points: true}
			for _, delay := range r.delays {
				if y, ok := r.ds.Median(r.key(style, delay), c.step, c.f); ok {
					s.X, s.Y = append(s.X, r.delayMs[delay]), append(s.Y, y)
				}
			}
			series = append(series, s)
		}
		svg, err := plot.Lines(c.title, "link delay one way, ms", c.y, series, plot.Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", c.title, err)
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: c.title + ", per style (medians over repetitions).", SVG: svg})
	}
	return nil
}
