package ipc

import (
	"fmt"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/stats"
)

// pairs are the paper's throughput comparisons: a completed more requests
// than b in the closed test with that many users.
var pairs = []struct {
	a, b  string
	users float64
}{
	{grpc, rest, 50}, {grpc, amqp, 50},
	{grpc, rest, 100}, {grpc, amqp, 100}, {amqp, rest, 100},
	{amqp, grpc, 200}, {amqp, rest, 200},
}

func pairID(a, b string, users float64) string { return fmt.Sprintf("tput-%s-vs-%s-%.0f", a, b, users) }

// lossFaults are the faults whose lost requests are findings of ours.
var lossFaults = []string{"kill-service", "restart-broker", "pause-service"}

// The paper's time to failure and the availability it concluded on are
// at 200 users, the last of its throughput tests.
const availabilityUsers = 200

func metricIDs() []string {
	var ids []string
	for _, p := range pairs {
		ids = append(ids, pairID(p.a, p.b, p.users))
	}
	ids = append(ids, "resp-grpc-vs-others-100", "kept-amqp-vs-sync-200",
		"mttf-amqp-vs-grpc-200", "mttf-grpc-vs-rest-200", "mttr-grpc-vs-rest", "mttr-amqp-vs-sync",
		"tput-amqp-vs-sync", "availability-amqp-vs-sync", "knee-amqp-vs-sync", "delay-cost-spread")
	for _, f := range lossFaults {
		ids = append(ids, "lost-share-"+f)
	}
	return ids
}

// first is a combination of one value: itself.
func first(xs []bounded) (bounded, bool) { return xs[0], true }

// order keeps a ratio that tells which of the two is larger: exact, or a
// bound wholly on one side of 1. A bound reaching across 1 (at least 0.7)
// tells nothing and is left out rather than read as a value.
func order(q bounded) (float64, bool) {
	return q.v, q.dir == exact || (q.dir == atLeast && q.v > 1) || (q.dir == atMost && q.v < 1)
}

// measuredOnly keeps an exact ratio only: how alike two values are cannot
// be judged on a bound.
func measuredOnly(q bounded) (float64, bool) { return q.v, q.dir == exact }

// over is across's f for the first value over a combination (first,
// mean) of the others, kept as keep says.
func over(combine func([]bounded) (bounded, bool), keep func(bounded) (float64, bool)) func(xs []bounded) (float64, bool) {
	return func(xs []bounded) (float64, bool) {
		den, ok := combine(xs[1:])
		if !ok {
			return 0, false
		}
		q, ok := ratio(xs[0], den)
		if !ok {
			return 0, false
		}
		return keep(q)
	}
}

// comparison is one pairwise ratio of a conjunction, by repetition, with
// what it left out.
type comparison struct {
	label string
	runs  map[int]float64
	left  leftOut
}

// metrics are the claims' metrics at the smallest delay, one value per
// repetition, each from the styles measured side by side in that
// repetition.
func (r *ipcRun) metrics() map[string]claims.Metric {
	m := map[string]claims.Metric{}
	d := r.base
	put := func(id string, perRun []float64, kind claims.Kind, note string) {
		if len(perRun) > 0 {
			m[id] = claims.Metric{PerRun: perRun, Ratio: true, Kind: kind, Note: note}
		}
	}
	// A metric combined across styles keeps a note even with no
	// repetition left: why nothing could be told is what the verdict
	// shows.
	putAcross := func(id string, runs map[int]float64, left leftOut, mt claims.Metric) {
		if len(runs) > 0 || left.any() {
			mt.PerRun, mt.Note = byRep(runs), mt.Note+left.words()
			m[id] = mt
		}
	}
	putBounded := func(id string, runs map[int]float64, left leftOut, note string) {
		putAcross(id, runs, left, claims.Metric{Ratio: true, Note: note})
	}
	// putAll is putAcross for a conjunction, one part per comparison,
	// the note naming what each left out.
	putAll := func(id string, mt claims.Metric, cs ...comparison) {
		measured := false
		for _, c := range cs {
			measured = measured || len(c.runs) > 0 || c.left.any()
			mt.All = append(mt.All, claims.Part{Label: c.label, PerRun: byRep(c.runs)})
			mt.Note += strings.ReplaceAll(c.left.words(), "; ", "; "+c.label+": ")
		}
		if measured {
			m[id] = mt
		}
	}
	tput := func(style string, users float64) map[int]float64 { return r.tputRuns(style, d, users) }
	for _, p := range pairs {
		put(pairID(p.a, p.b, p.users), analysis.Paired(tput(p.a, p.users), tput(p.b, p.users), analysis.Ratio), claims.Throughput,
			fmt.Sprintf("%s / %s requests answered 200, closed model, %.0f users, %s", p.a, p.b, p.users, d))
	}
	positive := func(xs []float64) bool {
		for _, x := range xs {
			if !(x > 0) {
				return false
			}
		}
		return true
	}
	// A claim that a style beats the others is every pairwise ratio it
	// implies: one over the best of the others would be biased (the best
	// of several noisy values is too good even when all are equal).
	ratioOf := func(xs []float64) (float64, bool) { return xs[0] / xs[1], positive(xs) }
	var resp []comparison
	for _, o := range []string{rest, amqp} {
		runs, left := across(ratioOf, r.meanRuns(grpc, d, 100), r.meanRuns(o, d, 100))
		resp = append(resp, comparison{grpc + "/" + o, runs, left})
	}
	putAll("resp-grpc-vs-others-100", claims.Metric{Ratio: true, Kind: claims.Latency, Note: "grpc's mean response / each other style's, 100 users, " + d}, resp...)
	var kept []comparison
	for _, o := range []string{rest, grpc} {
		runs, left := across(func(xs []float64) (float64, bool) { return (xs[0] / xs[1]) / (xs[2] / xs[3]), positive(xs) },
			tput(amqp, 200), tput(amqp, 100), tput(o, 200), tput(o, 100))
		kept = append(kept, comparison{amqp + "/" + o, runs, left})
	}
	// Four throughputs make each value, two of each deployment.
	putAll("kept-amqp-vs-sync-200", claims.Metric{Ratio: true, Kind: claims.Throughput, Deployments: 4,
		Note: "amqp's throughput at 200 users / at 100, over the same for each synchronous style, " + d}, kept...)

	// Averaged over the numbers of users: amqp over the mean of the sync
	// styles at each, then the geometric mean per repetition, over the
	// same numbers of users in every repetition.
	var levels []string
	levelRatios := map[string]map[int]float64{}
	for _, l := range r.closed {
		k := usersLabel(l.x)
		levels = append(levels, k)
		levelRatios[k], _ = across(func(xs []float64) (float64, bool) { return xs[0] / ((xs[1] + xs[2]) / 2), positive(xs) },
			tput(amqp, l.x), tput(rest, l.x), tput(grpc, l.x))
	}
	eff, levelsKept, levelsLost := analysis.GeoMeanByRep(levels, levelRatios)
	put("tput-amqp-vs-sync", byRep(eff), claims.Throughput, fmt.Sprintf("amqp's requests per 180 s / the mean of rest's and grpc's, geometric mean over the %d closed steps, %s", len(levelsKept), d)+analysis.LeftOut(levelsLost))

	mttf := func(style string) map[int]bounded { return r.mttfRuns(style, d, availabilityUsers) }
	// A value beyond its step or sweep is a bound; a ratio of bounds
	// counts where it settles which side of 1 it lies.
	const bounds = "; a style beyond its step or sweep counts with the bound, and only where the bound settles the order"
	mttfNote := "time to failure at 200 users (a style that never failed: at least the step's duration), " + d + bounds
	runs, left := across(over(first, order), mttf(amqp), mttf(grpc))
	putBounded("mttf-amqp-vs-grpc-200", runs, left, "amqp / grpc "+mttfNote)
	runs, left = across(over(first, order), mttf(grpc), mttf(rest))
	putBounded("mttf-grpc-vs-rest-200", runs, left, "grpc / rest "+mttfNote)

	mttr := func(style string) map[int]bounded { return r.recoveryRuns(style, d, killSteps) }
	runs, left = across(over(first, measuredOnly), mttr(grpc), mttr(rest))
	putBounded("mttr-grpc-vs-rest", runs, left, "grpc / rest time from the kill of a service to the first good 5-s window, "+d+"; exact values only: a bound cannot show two times alike")
	var recovery []comparison
	for _, o := range []string{rest, grpc} {
		runs, left := across(over(first, order), mttr(amqp), mttr(o))
		recovery = append(recovery, comparison{amqp + "/" + o, runs, left})
	}
	putAll("mttr-amqp-vs-sync", claims.Metric{Ratio: true, Note: "amqp's time to recovery / each synchronous style's, " + d + bounds}, recovery...)

	avail := func(style string) map[int]bounded { return r.availabilityRuns(style, d, availabilityUsers) }
	runs, left = across(over(mean, order), avail(amqp), avail(rest), avail(grpc))
	putBounded("availability-amqp-vs-sync", runs, left, "amqp's MTTF/(MTTF+MTTR) / the mean of rest's and grpc's, MTTF at 200 users, "+d+bounds)

	knee := func(style string) map[int]bounded { return r.kneeRuns(style, d) }
	var knees []comparison
	for _, o := range []string{rest, grpc} {
		runs, left := across(over(first, order), knee(amqp), knee(o))
		knees = append(knees, comparison{amqp + "/" + o, runs, left})
	}
	putAll("knee-amqp-vs-sync", claims.Metric{Ratio: true, Note: fmt.Sprintf("amqp's knee / each synchronous style's (p99 < %s ms, ≥ %s answered), %s", analysis.Num(kneeP99Ms, 0), analysis.Pct(kneeSuccess), d) + bounds}, knees...)

	// Distance is judged across the delays, so not at d alone. Costing
	// the styles alike is every pairwise difference of their costs (a
	// conjunction): the most minus the least would be biased, the range of
	// several noisy values being above 0 even when all are equal.
	if l, ok := r.costLevel(); ok {
		var costs []comparison
		for i, a := range styles {
			for _, b := range styles[i+1:] {
				runs, left := across(difference, r.costRuns(a, l), r.costRuns(b, l))
				costs = append(costs, comparison{a + "−" + b, runs, left})
			}
		}
		putAll("delay-cost-spread", claims.Metric{Unit: "ms per ms",
			Note: fmt.Sprintf("what one style's p50 gained from %s to %s minus another's, per ms of one-way delay, open model at %s requests per second, each pair of styles a comparison", r.base, r.farthest(), analysis.Num(l.x, 0))}, costs...)
	}

	// Losing nothing is every style losing nothing in every step with the
	// fault (a conjunction): the largest share over the styles would be
	// biased, and would say nothing of a style that was not measured.
	for _, f := range lossFaults {
		var lost []comparison
		steps := r.ds.Steps(map[string]string{"kind": "fault", "fault": f})
		for _, st := range steps {
			for _, style := range styles {
				label := style
				if len(steps) > 1 {
					label += " " + st.Name
				}
				lost = append(lost, comparison{label, r.lostShareRuns(style, d, st.Name), leftOut{}})
			}
		}
		putAll("lost-share-"+f, claims.Metric{Unit: "share", Range: &stats.Share,
			Note: "the share of requests sent and never answered, fault step " + f + ", " + d + ", each style a comparison"}, lost...)
	}
	return m
}
