// Package cache is the cache study's analysis: the first ten requests
// beside the paper's, steady-state latency, staleness after a mutation,
// the stampede, and outages of the database and the cache.
package cache

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("cache", cacheAnalysis{}) }

type cacheAnalysis struct{}

// The kinds of step the analysis reads, by their kind parameter.
var (
	first10Steps   = map[string]string{"kind": "first10"}
	stampedeSteps  = map[string]string{"kind": "stampede"}
	steadySteps    = map[string]string{"kind": "steady"}
	stalenessSteps = map[string]string{"kind": "staleness"}
	outageSteps    = map[string]string{"kind": "outage"}
)

func (cacheAnalysis) Needs() study.Needs {
	return study.Needs{
		Axes: []string{"strategy", "instances"},
		Steps: []study.StepNeed{
			{Where: first10Steps, For: "the paper's first 10 requests after a cold start"},
			{Where: stampedeSteps, For: "database queries of a cold-cache stampede"},
			{Where: steadySteps, Params: []string{"rate"}, For: "latency against the arrival rate"},
			{Where: stalenessSteps, For: "reads older than a committed mutation"},
			{Where: outageSteps, Params: []string{"dependency"}, For: "a dependency killed mid-run"},
		},
		Metrics: []string{"inproc-vs-best-1", "redis-vs-best-3", "redis-tail-vs-best-3",
			"stale-share-inproc-3", "stale-share-inproc-pubsub-3", "stale-share-redis-3"},
	}
}

// variant is the key of the variant with that strategy and instance
// count, "" when the run has none.
func variant(ds *analysis.Dataset, strategy, instances string) string {
	v, ok := ds.Variant(map[string]string{"strategy": strategy, "instances": instances})
	if !ok {
		return ""
	}
	return v.Key()
}

func (cacheAnalysis) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	var sections []analysis.Section
	first10, err := cacheFirst10(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	sections = append(sections, first10)
	sections = append(sections, cacheSteady(ds))
	stale, err := cacheStaleness(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	stampede, err := cacheStampede(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	instances, err := cacheInstances(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	sections = append(sections, stale, stampede, instances)
	faults, err := cacheFaults(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	sections = append(sections, faults)
	return analysis.Result{Sections: sections, Metrics: cacheMetrics(ds)}, nil
}

// firstLatencies reads the latencies of a step's requests in send order.
func firstLatencies(ds *analysis.Dataset, variant, step string) ([]float64, error) {
	units := ds.Units(variant, step)
	if len(units) == 0 {
		return nil, nil
	}
	rows, err := units[0].Dir.ReadRecords()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b records.Row) int { return int(a.Seq - b.Seq) })
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = r.LatencyMs
	}
	return out, nil
}

func cacheFirst10(ds *analysis.Dataset) (analysis.Section, error) {
	sec := analysis.Section{Title: "The paper's protocol: the first 10 requests"}
	sec.Text = append(sec.Text, "As the paper did: 10 requests per second from a cold start (every dependency and service restarted just before), the latency of each of the first 10 requests, measured from its intended send time. Repetition 1 is shown; ms.")
	// The paper's latencies of requests 1 to 10, as published.
	published := func(inst, strat string) []float64 {
		if ds.Claims == nil {
			return nil
		}
		return ds.Claims.Figures["first10-"+inst+"-"+strat].List
	}
	header := []string{"variant", "source"}
	for i := 1; i <= 10; i++ {
		header = append(header, strconv.Itoa(i))
	}
	t := analysis.Table{Header: append(header, "mean of 2–10")}
	steps := ds.Steps(first10Steps)
	if len(steps) == 0 {
		sec.Text = append(sec.Text, analysis.NotMeasured([]string{"the first-10 step"}))
		return sec, nil
	}
	sec.Text = append(sec.Text, analysis.NotMeasured(ds.Unmeasured(steps[:1])))
	for _, inst := range ds.AxisValues("instances") {
		var series []plot.XYSeries
		for _, strat := range ds.AxisValues("strategy") {
			v := variant(ds, strat, inst)
			lat, err := firstLatencies(ds, v, steps[0].Name)
			if err != nil {
				return sec, err
			}
			if len(lat) > 0 {
				t.Rows = append(t.Rows, latencyRow(v, "msbench", lat))
				series = append(series, xySeries(v, lat, false))
			}
			if pub := published(inst, strat); len(pub) > 0 {
				t.Rows = append(t.Rows, latencyRow(v, "paper", pub))
				s := xySeries("paper "+v, pub, true)
				s.Like = v
				series = append(series, s)
			}
		}
		if len(series) == 0 {
			continue
		}
		svg, err := plot.Lines(fmt.Sprintf("%s instance(s): first 10 requests", inst), "request", "latency (ms)", series, plot.Options{LogY: true})
		if err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Measured (solid) and published (dashed).", SVG: svg})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

func latencyRow(v, source string, lat []float64) []string {
	row := []string{v, source}
	for i := 0; i < 10; i++ {
		if i < len(lat) {
			row = append(row, analysis.Num(lat[i], 2))
		} else {
			row = append(row, "–")
		}
	}
	rest := analysis.NaN
	if len(lat) > 1 {
		rest = stats.Mean(lat[1:min(10, len(lat))])
	}
	return append(row, analysis.Num(rest, 2))
}

func xySeries(name string, ys []float64, dashed bool) plot.XYSeries {
	s := plot.XYSeries{Name: name, Dashed: dashed, Points: true}
	for i, y := range ys[:min(10, len(ys))] {
		s.X, s.Y = append(s.X, float64(i+1)), append(s.Y, max(y, 0.001))
	}
	return s
}

// steadyRates lists the steady-state steps and their rates.
func steadyRates(ds *analysis.Dataset) (names []string, rates []float64) {
	for _, st := range ds.Steps(steadySteps) {
		f, err := strconv.ParseFloat(st.Params["rate"], 64)
		if err != nil {
			f = analysis.NaN // the study file said a rate that is not a number
		}
		names, rates = append(names, st.Name), append(rates, f)
	}
	return names, rates
}

func cacheSteady(ds *analysis.Dataset) analysis.Section {
	sec := analysis.Section{Title: "Steady state"}
	names, rates := steadyRates(ds)
	sec.Text = append(sec.Text, "Thousands of requests per rate after a warm-up, open model (latency from the intended send time); medians over repetitions.",
		analysis.NotMeasured(ds.Unmeasured(ds.Steps(steadySteps))))
	t := analysis.Table{Header: []string{"variant", "rate req/s", "requests", "p50 ms", "p90 ms", "p99 ms", "p99/p50", "errors %"}}
	for _, q := range []summarymetric.Descriptor{summarymetric.P50, summarymetric.P99} {
		var series []plot.XYSeries
		for _, v := range ds.Variants {
			s := plot.XYSeries{Name: v.Key(), Points: true}
			for i, step := range names {
				val, ok := ds.Median(v.Key(), step, analysis.Of(q))
				if ok {
					s.X, s.Y = append(s.X, rates[i]), append(s.Y, val)
				}
			}
			if len(s.X) > 0 {
				series = append(series, s)
			}
		}
		if svg, err := plot.Lines("steady state: "+q.Name, "rate (requests per second)", q.Name+" latency (ms)", series, plot.Options{LogY: true}); err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: q.Name + " latency against the arrival rate.", SVG: svg})
		}
	}
	for _, v := range ds.Variants {
		for i, step := range names {
			units := ds.Units(v.Key(), step)
			if len(units) == 0 {
				continue
			}
			get := func(f func(u *analysis.Unit) float64) float64 { m, _ := ds.Median(v.Key(), step, f); return m }
			p50 := get(analysis.Of(summarymetric.P50))
			p99 := get(analysis.Of(summarymetric.P99))
			t.Rows = append(t.Rows, []string{v.Key(), analysis.Num(rates[i], 0), analysis.Num(get(func(u *analysis.Unit) float64 { return float64(u.Summary.Requests) }), 0),
				analysis.Num(p50, 3), analysis.Num(get(analysis.Of(summarymetric.P90)), 3), analysis.Num(p99, 3), analysis.Num(p99/p50, 1),
				analysis.Num(get(func(u *analysis.Unit) float64 { return 100 * (1 - u.Summary.SuccessRate) }), 2)})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec
}

// staleStats is what one variant's staleness step showed.
type staleStats struct {
	reads, stale  int
	mutations     int
	worstFreshS   float64 // the longest a mutation took until no read was stale
	stillStale    bool    // a read was stale at the end of the step
	measured      bool
	mutationNotes []string
}

// staleness counts reads that carried an older data version than the last
// mutation committed before they were sent: the version is the step's tag
// header, which every read keeps and every mutation's answer carries.
// rep picks the repetition; 0 takes the first measured.
func staleness(ds *analysis.Dataset, variant string, step *study.Step, rep int) (staleStats, error) {
	var st staleStats
	if step.TagHeader == "" {
		return st, fmt.Errorf("step %s keeps no data version (tag_header), so staleness cannot be counted", step.Name)
	}
	var u *analysis.Unit
	for _, x := range ds.Units(variant, step.Name) {
		if rep == 0 || x.Rep == rep {
			u = x
			break
		}
	}
	if u == nil {
		return st, nil
	}
	evs, err := u.Dir.ReadEvents()
	if err != nil {
		return st, err
	}
	rows, err := u.Dir.ReadRecords()
	if err != nil {
		return st, err
	}
	start := u.Summary.StartedAt.UnixNano()
	type commit struct {
		atNs    int64
		version int64
	}
	var commits []commit
	for _, ev := range evs {
		v, err := strconv.ParseInt(ev.Headers[step.TagHeader], 10, 64)
		if ev.Action != "request" || ev.Error != "" || err != nil {
			continue
		}
		// The commit happened before the answer: a read sent after the
		// answer must see it.
		commits = append(commits, commit{atNs: start + int64(ev.DoneS*1e9), version: v})
		st.mutationNotes = append(st.mutationNotes, fmt.Sprintf("v%d at %.1fs", v, ev.DoneS))
	}
	st.mutations, st.measured = len(commits), true
	lastStale := make([]int64, len(commits))
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		st.reads++
		for i := len(commits) - 1; i >= 0; i-- {
			if r.Sent >= commits[i].atNs {
				if r.Tag < commits[i].version {
					st.stale++
					lastStale[i] = max(lastStale[i], r.Sent)
				}
				break
			}
		}
	}
	end := u.Summary.EndedAt.UnixNano()
	for i, c := range commits {
		if lastStale[i] == 0 {
			continue
		}
		st.worstFreshS = max(st.worstFreshS, float64(lastStale[i]-c.atNs)/1e9)
		if i == len(commits)-1 && end-lastStale[i] < int64(5e8) {
			st.stillStale = true
		}
	}
	return st, nil
}

func cacheStaleness(ds *analysis.Dataset) (analysis.Section, error) {
	sec := analysis.Section{Title: "Staleness after a mutation"}
	steps := ds.Steps(stalenessSteps)
	if len(steps) == 0 {
		sec.Text = append(sec.Text, analysis.NotMeasured([]string{"the staleness step"}))
		return sec, nil
	}
	sec.Text = append(sec.Text, "During a steady load, roles are renamed and permissions granted and revoked through the gateway. Every answer carries the data version it reflects (X-Data-Version) and msbench keeps it with each request: a read sent after a mutation's answer that reflects an older version is stale. Time until fresh: from the mutation's answer to the last stale read it caused.")
	t := analysis.Table{Header: []string{"variant", "reads", "stale reads", "stale %", "mutations", "longest time until fresh s", "stale at the end"}}
	var cats []string
	shares := plot.Series{Name: "stale reads %"}
	sec.Text = append(sec.Text, analysis.NotMeasured(ds.Unmeasured(steps[:1])))
	for _, v := range ds.Variants {
		st, err := staleness(ds, v.Key(), steps[0], 0)
		if err != nil {
			return sec, err
		}
		if !st.measured {
			continue
		}
		share := 100 * float64(st.stale) / float64(max(st.reads, 1))
		end := "no"
		if st.stillStale {
			end = "yes: not fresh within the step"
		}
		t.Rows = append(t.Rows, []string{v.Key(), strconv.Itoa(st.reads), strconv.Itoa(st.stale), analysis.Num(share, 2), fmt.Sprintf("%d (%s)", st.mutations, strings.Join(st.mutationNotes, ", ")), analysis.Num(st.worstFreshS, 2), end})
		cats = append(cats, v.Key())
		shares.Values = append(shares.Values, share)
	}
	sec.Tables = append(sec.Tables, t)
	if len(cats) > 0 {
		if svg, err := plot.GroupedBars("stale reads", "% of successful reads", cats, []plot.Series{shares}, plot.Options{}); err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Share of reads that returned data older than a mutation already answered.", SVG: svg})
		}
	}
	return sec, nil
}

func cacheStampede(ds *analysis.Dataset) (analysis.Section, error) {
	sec := analysis.Section{Title: "Cold-cache stampede"}
	steps := ds.Steps(stampedeSteps)
	if len(steps) == 0 {
		sec.Text = append(sec.Text, analysis.NotMeasured([]string{"the stampede step"}))
		return sec, nil
	}
	sec.Text = append(sec.Text, "Every dependency and service restarted, then 50 clients send their first request at once. Database queries are each rbac instance's own count (/stats) after the step.")
	t := analysis.Table{Header: []string{"variant", "requests", "database queries", "per instance", "p50 ms", "max ms"}}
	sec.Text = append(sec.Text, analysis.NotMeasured(ds.Unmeasured(steps[:1])))
	for _, v := range ds.Variants {
		units := ds.Units(v.Key(), steps[0].Name)
		if len(units) == 0 {
			continue
		}
		c, err := units[0].Dir.ReadCollected()
		if err != nil {
			return sec, err
		}
		total := 0
		var per []string
		for _, a := range c["rbac"] {
			var s struct {
				DBQueries int `json:"db_queries"`
			}
			if json.Unmarshal(a.Body, &s) == nil {
				total += s.DBQueries
				per = append(per, strconv.Itoa(s.DBQueries))
			}
		}
		sum := units[0].Summary
		t.Rows = append(t.Rows, []string{v.Key(), strconv.FormatInt(sum.Requests, 10), strconv.Itoa(total), strings.Join(per, " + "), analysis.Num(sum.Latency.P50, 2), analysis.Num(sum.Latency.Max, 2)})
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

func cacheInstances(ds *analysis.Dataset) (analysis.Section, error) {
	sec := analysis.Section{Title: "Requests per instance"}
	sec.Text = append(sec.Text, "The gateway's own count of the requests it passed to each instance (round robin), per step.")
	t := analysis.Table{Header: []string{"variant", "step", "requests per instance", "failures"}}
	for _, v := range ds.Variants {
		for _, st := range ds.Study.Load.Steps {
			units := ds.Units(v.Key(), st.Name)
			if len(units) == 0 {
				continue
			}
			if len(st.Collect) == 0 {
				continue // the step asks the gateway for nothing
			}
			c, err := units[0].Dir.ReadCollected()
			if err != nil {
				return sec, err
			}
			if len(c["gateway"]) == 0 {
				continue // this step collects from the rbac instances only
			}
			var g struct {
				Upstreams []struct {
					Requests int `json:"requests"`
					Failures int `json:"failures"`
				} `json:"upstreams"`
			}
			if err := json.Unmarshal(c["gateway"][0].Body, &g); err != nil {
				return sec, fmt.Errorf("%s: the gateway's counts: %w", units[0].Dir, err)
			}
			var reqs, fails []string
			for _, u := range g.Upstreams {
				reqs, fails = append(reqs, strconv.Itoa(u.Requests)), append(fails, strconv.Itoa(u.Failures))
			}
			t.Rows = append(t.Rows, []string{v.Key(), st.Name, strings.Join(reqs, " / "), strings.Join(fails, " / ")})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

func cacheFaults(ds *analysis.Dataset) (analysis.Section, error) {
	sec := analysis.Section{Title: "Faults: Postgres and Redis killed mid-run"}
	sec.Text = append(sec.Text, "A dependency is killed (SIGKILL) during a steady load of 100 requests per second and restarted 3 s later; a mutation is sent during the outage and one after. Requests lost are the reads that failed; a mutation must answer 2xx or 503, never silently vanish, and a committed one must show in every later read (the last column counts reads that did not).")
	t := analysis.Table{Header: []string{"variant", "outage", "reads", "failed reads", "errors", "first failure s", "last failure s", "mutations (status)", "reads older than a committed mutation"}}
	steps := ds.Steps(outageSteps)
	sec.Text = append(sec.Text, analysis.NotMeasured(ds.Unmeasured(steps)))
	for _, v := range ds.Variants {
		for _, step := range steps {
			units := ds.Units(v.Key(), step.Name)
			if len(units) == 0 {
				continue
			}
			u := units[0]
			evs, err := u.Dir.ReadEvents()
			if err != nil {
				return sec, err
			}
			rows, err := u.Dir.ReadRecords()
			if err != nil {
				return sec, err
			}
			start := u.Summary.StartedAt.UnixNano()
			first, last := analysis.NaN, analysis.NaN
			failed := 0
			for _, r := range rows {
				if r.Error == "" {
					continue
				}
				at := float64(r.Sent-start) / 1e9
				if failed == 0 {
					first, last = at, at
				}
				first, last = min(first, at), max(last, at)
				failed++
			}
			var muts []string
			for _, ev := range evs {
				if ev.Action == "request" {
					muts = append(muts, fmt.Sprintf("%.0fs: %d%s", ev.AtS, ev.Status, errorNote(ev.Error)))
				}
			}
			var errs []string
			for _, k := range slices.Sorted(maps.Keys(u.Summary.Errors)) {
				errs = append(errs, fmt.Sprintf("%s %d", k, u.Summary.Errors[k]))
			}
			st, err := staleness(ds, v.Key(), step, 0)
			if err != nil {
				return sec, err
			}
			t.Rows = append(t.Rows, []string{v.Key(), step.Params["dependency"], strconv.FormatInt(u.Summary.Requests, 10), strconv.Itoa(failed),
				strings.Join(errs, ", "), analysis.Num(first, 2), analysis.Num(last, 2), strings.Join(muts, "; "), strconv.Itoa(st.stale)})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

func errorNote(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// paperStrategies are the strategies the paper compared; inproc-pubsub is
// ours, and no claim of the paper's is about it.
var paperStrategies = []string{"db", "redis", "inproc"}

// cacheMetrics are the claims' metrics, one value per repetition, from
// the variants measured in that repetition: latency at the lowest steady
// rate (thousands of requests, not ten), and the share of stale reads.
func cacheMetrics(ds *analysis.Dataset) map[string]claims.Metric {
	m := map[string]claims.Metric{}
	names, rates := steadyRates(ds)
	if len(names) > 0 {
		step := names[0]
		for i, r := range rates {
			if r < rates[slices.Index(names, step)] {
				step = names[i]
			}
		}
		p50 := analysis.Of(summarymetric.P50)
		p99 := analysis.Of(summarymetric.P99)
		tail := func(u *analysis.Unit) float64 { return p99(u) - p50(u) }
		// A claim that a strategy is fastest is every pairwise ratio it
		// implies, one comparison per rival (a conjunction): the winner
		// over the best of the others would be biased, the best of several
		// noisy values being too good even when all are equal. A rival not
		// measured keeps its comparison, empty: the claim cannot hold over
		// a strategy it was never compared with.
		against := func(id, winner, inst string, f func(u *analysis.Unit) float64, mt claims.Metric) {
			w := ds.PerRun(variant(ds, winner, inst), step, f)
			measured := false
			for _, other := range paperStrategies {
				if other == winner {
					continue
				}
				runs := analysis.Paired(w, ds.PerRun(variant(ds, other, inst), step, f), analysis.Ratio)
				mt.All = append(mt.All, claims.Part{Label: winner + "/" + other, PerRun: runs})
				measured = measured || len(runs) > 0
			}
			if measured {
				mt.Ratio, mt.Unit, mt.Note = true, "×", mt.Note+", "+step
				m[id] = mt
			}
		}
		against("inproc-vs-best-1", "inproc", "1", p50, claims.Metric{Kind: claims.Latency,
			Note: "in-process p50 / redis's and / db's, one instance, each a comparison"})
		against("redis-vs-best-3", "redis", "3", p50, claims.Metric{Kind: claims.Latency,
			Note: "redis p50 / in-process's and / db's, three instances, each a comparison"})
		// No kind: the A/A twin measures p99, not the gap p99 − p50, whose
		// log varies more than p99's (the difference of two noisy values),
		// so one run of it gets no interval rather than too narrow a one.
		against("redis-tail-vs-best-3", "redis", "3", tail, claims.Metric{
			Note: "redis p99−p50 / in-process's and / db's, three instances, each a comparison"})
	}
	if steps := ds.Steps(stalenessSteps); len(steps) > 0 {
		for _, strat := range []string{"inproc", "inproc-pubsub", "redis"} {
			v := variant(ds, strat, "3")
			for _, u := range ds.Units(v, steps[0].Name) {
				st, err := staleness(ds, v, steps[0], u.Rep)
				if err != nil || !st.measured {
					continue
				}
				id := "stale-share-" + strat + "-3"
				c := m[id]
				c.PerRun, c.Range, c.Note = append(c.PerRun, float64(st.stale)/float64(max(st.reads, 1))), &stats.Share, "share of reads older than a mutation already answered, three instances"
				m[id] = c
			}
		}
	}
	return m
}
