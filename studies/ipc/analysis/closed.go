package ipc

import (
	"strconv"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

// paperWindowS is the length of the paper's throughput tests: it counted
// the requests completed in 180 s.
const paperWindowS = 180

// per180 is a closed step's requests answered with a product page, scaled
// from its window to the paper's 180 s.
func per180(st *study.Step) func(u *analysis.Unit) float64 {
	return func(u *analysis.Unit) float64 {
		return float64(u.Summary.Successes) * paperWindowS / stepWindow(st, u).Seconds()
	}
}

var meanResponse = analysis.Of(summarymetric.Mean)

// closedRuns is, by repetition, what of(step) measures of a style at a
// delay in the closed step with that many users; empty when the run has no
// such step.
func (r *ipcRun) closedRuns(style, delay string, users float64, of func(st *study.Step) func(u *analysis.Unit) float64) map[int]float64 {
	st := at(r.closed, users)
	if st == nil {
		return map[int]float64{}
	}
	return r.ds.PerRun(r.key(style, delay), st.Name, of(st))
}

// tputRuns is the requests per 180 s of a style, by repetition.
func (r *ipcRun) tputRuns(style, delay string, users float64) map[int]float64 {
	return r.closedRuns(style, delay, users, per180)
}

// meanRuns is the mean response time of a style, by repetition.
func (r *ipcRun) meanRuns(style, delay string, users float64) map[int]float64 {
	return r.closedRuns(style, delay, users, func(*study.Step) func(u *analysis.Unit) float64 { return meanResponse })
}

func usersLabel(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + " users" }

func (r *ipcRun) throughputSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Throughput against users (the paper's 180-s tests)",
		Text: []string{
			"Requests answered with a product page per 180 s (successes in the measured window × 180 s / the window), closed model. Bars: the median over repetitions at " + r.base + " with its 95% interval (with fewer than 6, the mean with its own); beside them the paper's counts where it published them (200 users only: at 50 and 100 users it gave differences, set beside ours in the second table).",
			r.notMeasured(closedSteps),
		},
	}
	var cats []string
	for _, l := range r.closed {
		cats = append(cats, usersLabel(l.x))
	}
	var ours, paper []plot.Series
	for _, style := range styles {
		s := plot.Series{Name: style + " (msbench)"}
		p := plot.Series{Name: style + " (paper)"}
		for _, l := range r.closed {
			med, lo, hi := analysis.MedianCI(byRep(r.tputRuns(style, r.base, l.x)), stats.NonNegative)
			s.Values, s.Low, s.High = append(s.Values, med), append(s.Low, lo), append(s.High, hi)
			pv := analysis.NaN
			if l.x == 200 {
				pv = r.ds.PaperPoint("throughput-200", style)
			}
			p.Values = append(p.Values, pv)
		}
		ours, paper = append(ours, s), append(paper, p)
	}
	if len(cats) > 0 {
		svg, err := plot.GroupedBars("Requests completed per 180 s", "requests answered 200 per 180 s", cats, append(ours, paper...), plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Throughput against users at " + r.base + ", msbench beside the paper (which ran on 3 nodes of 2 vCPU: compare the order, not the heights).", SVG: svg})
	}
	t := analysis.Table{
		Caption: "Per variant and users: median over repetitions with its 95% interval (with fewer than 6, the mean with its own).",
		Header:  []string{"variant", "users", "reps", "requests per 180 s", "errors %", "mean response ms"},
	}
	for _, delay := range r.delays {
		for _, style := range styles {
			k := r.key(style, delay)
			for _, l := range r.closed {
				units := r.ds.Units(k, l.step.Name)
				if len(units) == 0 {
					continue
				}
				errs := r.ds.PerRun(k, l.step.Name, func(u *analysis.Unit) float64 { return 100 * (1 - u.Summary.SuccessRate) })
				t.Rows = append(t.Rows, []string{k, analysis.Num(l.x, 0), strconv.Itoa(len(units)), analysis.WithCI(byRep(r.ds.PerRun(k, l.step.Name, per180(l.step))), 0, stats.NonNegative),
					analysis.WithCI(byRep(errs), 2, stats.Percent), analysis.WithCI(byRep(r.ds.PerRun(k, l.step.Name, meanResponse)), 1, stats.NonNegative)})
			}
		}
	}
	sec.Tables = append(sec.Tables, t, r.paperDifferences())
	return sec, nil
}

// paperDifferences sets each figure the paper gave beside the same figure
// measured, per repetition from the styles measured side by side.
func (r *ipcRun) paperDifferences() analysis.Table {
	t := analysis.Table{
		Caption: "The paper's figures beside ours at " + r.base + ": differences per repetition between styles measured in it, median over repetitions with its 95% interval (with fewer than 6, the mean with its own). Our absolute counts depend on this machine; the sign is what a claim compares.",
		Header:  []string{"users", "figure", "paper", "msbench"},
	}
	diff := func(a, b float64) float64 { return a - b }
	tput := func(style string, users float64) map[int]float64 { return r.tputRuns(style, r.base, users) }
	mean := func(style string) map[int]float64 { return r.meanRuns(style, r.base, 100) }
	kept := func(style string) []float64 {
		return analysis.Paired(tput(style, 200), tput(style, 100), analysis.Ratio)
	}
	for _, row := range []struct {
		users  float64
		figure string
		paper  float64
		ours   []float64
		digits int
		rng    stats.Range // a difference takes either sign
	}{
		{50, "gRPC − REST, requests", r.ds.PaperPoint("throughput-diff-50", "grpc-minus-rest"), analysis.Paired(tput(grpc, 50), tput(rest, 50), diff), 0, stats.Unbounded},
		{50, "gRPC − RabbitMQ, requests", r.ds.PaperPoint("throughput-diff-50", "grpc-minus-amqp"), analysis.Paired(tput(grpc, 50), tput(amqp, 50), diff), 0, stats.Unbounded},
		{100, "RabbitMQ − REST, requests", r.ds.PaperPoint("throughput-diff-100", "amqp-minus-rest"), analysis.Paired(tput(amqp, 100), tput(rest, 100), diff), 0, stats.Unbounded},
		// The paper's 200 ms is gRPC ahead of each other style; the better
		// of the two minus gRPC's would be biased, so each pair is a row.
		{100, "REST's mean response − gRPC's, ms", r.ds.PaperValue("response-diff-100"), analysis.Paired(mean(rest), mean(grpc), diff), 1, stats.Unbounded},
		{100, "RabbitMQ's mean response − gRPC's, ms", r.ds.PaperValue("response-diff-100"), analysis.Paired(mean(amqp), mean(grpc), diff), 1, stats.Unbounded},
		{200, "RabbitMQ, requests", r.ds.PaperPoint("throughput-200", amqp), byRep(tput(amqp, 200)), 0, stats.NonNegative},
		{200, "gRPC − RabbitMQ, requests", r.ds.PaperPoint("throughput-200", grpc) - r.ds.PaperPoint("throughput-200", amqp), analysis.Paired(tput(grpc, 200), tput(amqp, 200), diff), 0, stats.Unbounded},
		{200, "REST − RabbitMQ, requests", r.ds.PaperPoint("throughput-200", rest) - r.ds.PaperPoint("throughput-200", amqp), analysis.Paired(tput(rest, 200), tput(amqp, 200), diff), 0, stats.Unbounded},
		{200, "REST: at 200 users / at 100 users", analysis.NaN, kept(rest), 3, stats.NonNegative},
		{200, "gRPC: at 200 users / at 100 users", analysis.NaN, kept(grpc), 3, stats.NonNegative},
		{200, "RabbitMQ: at 200 users / at 100 users", analysis.NaN, kept(amqp), 3, stats.NonNegative},
	} {
		paper := analysis.Num(row.paper, row.digits)
		if row.paper != row.paper {
			paper = "not published"
		}
		t.Rows = append(t.Rows, []string{analysis.Num(row.users, 0), row.figure, paper, analysis.WithCI(row.ours, row.digits, row.rng)})
	}
	return t
}

// percentiles are the latency figures drawn against users.
var percentiles = []summarymetric.Descriptor{summarymetric.P50, summarymetric.P95, summarymetric.P99}

func (r *ipcRun) latencySection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Latency against users",
		Text: []string{
			"What the paper did not report beside its throughput: the percentiles of the response time of the same closed steps. Medians over repetitions of each repetition's percentile (a percentile is never pooled over repetitions).",
			r.notMeasured(closedSteps),
		},
	}
	for _, p := range percentiles {
		if len(r.closed) == 0 {
			break
		}
		var series []plot.XYSeries
		for _, style := range styles {
			s := plot.XYSeries{Name: style, Points: true}
			for _, l := range r.closed {
				if y, ok := r.ds.Median(r.key(style, r.base), l.step.Name, analysis.Of(p)); ok {
					s.X, s.Y = append(s.X, l.x), append(s.Y, y)
				}
			}
			series = append(series, s)
		}
		svg, err := plot.Lines(p.Name+" latency against users", "users (closed model)", p.Name+" latency, ms", series, plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: p.Name + " of the response time against users, per style, at " + r.base + ".", SVG: svg})
	}
	t := analysis.Table{Caption: "Per variant and users, ms: medians over repetitions.", Header: []string{"variant", "users", "p50", "p95", "p99", "max"}}
	for _, delay := range r.delays {
		for _, style := range styles {
			k := r.key(style, delay)
			for _, l := range r.closed {
				row := []string{k, analysis.Num(l.x, 0)}
				for _, p := range percentiles {
					y, _ := r.ds.Median(k, l.step.Name, analysis.Of(p))
					row = append(row, analysis.Num(y, 1))
				}
				y, ok := r.ds.Median(k, l.step.Name, func(u *analysis.Unit) float64 { return u.Summary.Latency.Max })
				if ok {
					t.Rows = append(t.Rows, append(row, analysis.Num(y, 1)))
				}
			}
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}
