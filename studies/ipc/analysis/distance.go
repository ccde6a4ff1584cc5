package ipc

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
)

// roundTripsPerPage is what one more millisecond of one-way delay should
// add to a page, in milliseconds, in every style: the five calls run at
// once, each crosses its link out and back (RabbitMQ: publish to the
// broker, reply from it), and the page waits for the slowest.
const roundTripsPerPage = 2

// spread compares styles by how many ms each ms of one-way delay adds to
// their median: the steepest minus the shallowest, per repetition.
func spread(xs []float64) (float64, bool) { return slices.Max(xs) - slices.Min(xs), true }

// p50 is a step's median response time.
func p50(u *analysis.Unit) float64 { return u.Summary.Latency.P50 }

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

// costRuns is, by repetition, the ms a style's median gains per ms of
// one-way delay in an open step: the least-squares slope of its p50
// against the delays that repetition measured (two at least).
func (r *ipcRun) costRuns(style string, l level) map[int]float64 {
	xs, ys := map[int][]float64{}, map[int][]float64{}
	for _, d := range r.delays {
		for rep, y := range r.ds.PerRun(r.key(style, d), l.step.Name, p50) {
			xs[rep], ys[rep] = append(xs[rep], r.delayMs[d]), append(ys[rep], y)
		}
	}
	out := map[int]float64{}
	for rep := range xs {
		if len(xs[rep]) < 2 {
			continue
		}
		_, slope := stat.LinearRegression(xs[rep], ys[rep], nil, false)
		out[rep] = slope
	}
	return out
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
			"Ranks come from each style's median over repetitions; a change of rank within the A/A noise floor is no change.",
			"In a saturated closed model a page waits seconds in queues and milliseconds of distance cannot show; under a fixed arrival rate below the knee they can, so the open steps measured at several delays are read for what distance costs each style."},
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

// costTable gives, per style, the ms of median each ms of one-way delay
// adds at the open level cl, beside the round trip it should add.
func (r *ipcRun) costTable(cl level) analysis.Table {
	t := analysis.Table{
		Caption: fmt.Sprintf("What distance costs at %s requests per second: the ms a style's p50 gains per ms of one-way delay, the least-squares slope over the delays of each repetition, median (95%% interval of the mean). One round trip per page is %d.", analysis.Num(cl.x, 0), roundTripsPerPage),
		Header:  []string{"style", "reps", "p50 ms per ms of delay", "per repetition"},
	}
	for _, style := range styles {
		runs := r.costRuns(style, cl)
		if len(runs) == 0 {
			t.Rows = append(t.Rows, []string{style, "0", "not measured: no repetition has this step at two delays", ""})
			continue
		}
		var each []string
		for _, rep := range slices.Sorted(maps.Keys(runs)) {
			each = append(each, analysis.Num(runs[rep], 2))
		}
		t.Rows = append(t.Rows, []string{style, fmt.Sprint(len(runs)), analysis.WithCI(byRep(runs), 2, stats.Unbounded), strings.Join(each, ", ")})
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

// costSpreadRuns is, by repetition, how far apart the styles' costs of
// distance lie (ms of p50 per ms of one-way delay); false when no open
// step was measured at several delays.
func (r *ipcRun) costSpreadRuns() (runs map[int]float64, undetermined int, l level, ok bool) {
	l, ok = r.costLevel()
	if !ok {
		return nil, 0, l, false
	}
	runs, undetermined = across(spread, r.costRuns(rest, l), r.costRuns(grpc, l), r.costRuns(amqp, l))
	return runs, undetermined, l, true
}
