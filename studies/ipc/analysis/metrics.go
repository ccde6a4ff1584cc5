package ipc

import (
	"fmt"

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
// highest, mean) of the others, kept as keep says.
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

// metrics are the claims' metrics at the smallest delay, one value per
// repetition, each from the styles measured side by side in that
// repetition.
func (r *ipcRun) metrics() map[string]claims.Metric {
	m := map[string]claims.Metric{}
	d := r.base
	put := func(id string, perRun []float64, ratio bool, note string) {
		if len(perRun) > 0 {
			m[id] = claims.Metric{PerRun: perRun, Ratio: ratio, Note: note}
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
	tput := func(style string, users float64) map[int]float64 { return r.tputRuns(style, d, users) }
	for _, p := range pairs {
		put(pairID(p.a, p.b, p.users), analysis.Paired(tput(p.a, p.users), tput(p.b, p.users), analysis.Ratio), true,
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
	resp, left := across(func(xs []float64) (float64, bool) { return xs[0] / min(xs[1], xs[2]), positive(xs) },
		r.meanRuns(grpc, d, 100), r.meanRuns(rest, d, 100), r.meanRuns(amqp, d, 100))
	putAcross("resp-grpc-vs-others-100", resp, left, claims.Metric{Ratio: true, Note: "grpc's mean response / the better of rest's and amqp's, 100 users, " + d})
	kept, left := across(func(xs []float64) (float64, bool) {
		return (xs[0] / xs[1]) / max(xs[2]/xs[3], xs[4]/xs[5]), positive(xs)
	}, tput(amqp, 200), tput(amqp, 100), tput(rest, 200), tput(rest, 100), tput(grpc, 200), tput(grpc, 100))
	putAcross("kept-amqp-vs-sync-200", kept, left, claims.Metric{Ratio: true, Note: "amqp's throughput at 200 users / at 100, over the same for the better-keeping of rest and grpc, " + d})

	// Averaged over the numbers of users: amqp over the mean of the sync
	// styles at each, then the geometric mean per repetition.
	levelRatios := map[int][]float64{}
	for _, l := range r.closed {
		ratios, _ := across(func(xs []float64) (float64, bool) { return xs[0] / ((xs[1] + xs[2]) / 2), positive(xs) },
			tput(amqp, l.x), tput(rest, l.x), tput(grpc, l.x))
		for rep, x := range ratios {
			levelRatios[rep] = append(levelRatios[rep], x)
		}
	}
	eff := map[int]float64{}
	for rep, xs := range levelRatios {
		eff[rep], _, _ = stats.GeoMeanCI(xs, 0.95)
	}
	put("tput-amqp-vs-sync", byRep(eff), true, fmt.Sprintf("amqp's requests per 180 s / the mean of rest's and grpc's, geometric mean over the %d closed steps, %s", len(r.closed), d))

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
	runs, left = across(over(highest, order), mttr(amqp), mttr(rest), mttr(grpc))
	putBounded("mttr-amqp-vs-sync", runs, left, "amqp's time to recovery / the longer of rest's and grpc's, "+d+bounds)

	avail := func(style string) map[int]bounded { return r.availabilityRuns(style, d, availabilityUsers) }
	runs, left = across(over(mean, order), avail(amqp), avail(rest), avail(grpc))
	putBounded("availability-amqp-vs-sync", runs, left, "amqp's MTTF/(MTTF+MTTR) / the mean of rest's and grpc's, MTTF at 200 users, "+d+bounds)

	knee := func(style string) map[int]bounded { return r.kneeRuns(style, d) }
	runs, left = across(over(highest, order), knee(amqp), knee(rest), knee(grpc))
	putBounded("knee-amqp-vs-sync", runs, left, fmt.Sprintf("amqp's knee / the higher of rest's and grpc's (p99 < %s ms, ≥ %s answered), %s", analysis.Num(kneeP99Ms, 0), analysis.Pct(kneeSuccess), d)+bounds)

	// Distance is judged across the delays, so not at d alone.
	if l, ok := r.costLevel(); ok {
		runs, left := across(spread, r.costRuns(rest, l), r.costRuns(grpc, l), r.costRuns(amqp, l))
		putAcross("delay-cost-spread", runs, left, claims.Metric{Unit: "ms per ms", Range: &stats.NonNegative,
			Note: fmt.Sprintf("the most minus the least a style's p50 gained from %s to %s, per ms of one-way delay, open model at %s requests per second", r.base, r.farthest(), analysis.Num(l.x, 0))})
	}

	for _, f := range lossFaults {
		lost := r.lostShareRuns(f, d)
		if len(lost) > 0 {
			m["lost-share-"+f] = claims.Metric{PerRun: byRep(lost), Unit: "share", Range: &stats.Share, Note: "the largest share of requests sent and never answered, over the styles, fault step " + f + ", " + d}
		}
	}
	return m
}
