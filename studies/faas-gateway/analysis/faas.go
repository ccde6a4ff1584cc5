// Package faasgateway is the faas-gateway study's analysis: where the
// time of a function call behind an HTTP gateway goes, and the paper's
// five claims about it.
package faasgateway

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("faas-gateway", faas{}) }

type faas struct{}

// Every step is one endpoint of the gateways, named by its endpoint
// parameter; the two axes are the framework and the connection policy.
func (faas) Needs() study.Needs {
	return study.Needs{
		Axes:  []string{"framework", "policy"},
		Steps: []study.StepNeed{{Params: []string{"endpoint"}, For: "the endpoint each step loads"}},
		Metrics: []string{"delta-share-small", "delta-share-small-dial-minus-pooled", "delta-share-image", "delta-share-image-dial-minus-pooled",
			"framework-spread", "gin-speed", "gin-consistency", "fiber-vs-nethttp"},
	}
}

// faasStages is one endpoint of one variant: the means of the caller's round
// trip and of each Server-Timing stage, in ms. Means, unlike medians, add
// up, so the stages stack to the round trip exactly.
type faasStages struct {
	roundTrip, handler, pre, rpc, fn float64
	p50, p99                         float64
	ok                               bool
}

func (s faasStages) network() float64  { return s.roundTrip - s.handler }
func (s faasStages) after() float64    { return s.handler - s.pre - s.rpc }
func (s faasStages) rpcOver() float64  { return s.rpc - s.fn }
func (s faasStages) reqWire() float64  { return s.network() / 2 }
func (s faasStages) delta() float64    { return s.roundTrip - s.reqWire() - s.pre - s.rpc }
func (s faasStages) deltaShr() float64 { return s.delta() / s.roundTrip }

// stagesOf summarises one endpoint of one variant: over every repetition
// (the median of each figure) when rep is 0, else that repetition's.
func stagesOf(ds *analysis.Dataset, variant, step string, rep int) faasStages {
	var units []*analysis.Unit
	for _, u := range ds.Units(variant, step) {
		if rep == 0 || u.Rep == rep {
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return faasStages{}
	}
	med := func(f func(u *analysis.Unit) float64) float64 {
		xs := make([]float64, len(units))
		for i, u := range units {
			xs[i] = f(u)
		}
		return stats.Median(xs)
	}
	st := func(name string) func(u *analysis.Unit) float64 {
		return func(u *analysis.Unit) float64 { return u.Summary.ServerTiming[name].Mean }
	}
	return faasStages{
		roundTrip: med(func(u *analysis.Unit) float64 { return u.Summary.Uncorrected.Mean }),
		handler:   med(st("handler")),
		pre:       med(st("pre")),
		rpc:       med(st("rpc")),
		fn:        med(st("fn")),
		p50:       med(analysis.Of(summarymetric.P50)),
		p99:       med(analysis.Of(summarymetric.P99)),
		ok:        true,
	}
}

// faasCell indexes the measurements by framework, policy, endpoint and
// link delay ("" in a study without a delay axis).
type faasCell struct{ framework, policy, endpoint, delay string }

// cells measures every framework, policy, endpoint and delay: over all
// repetitions when rep is 0, else in that one.
func cells(ds *analysis.Dataset, rep int) (map[faasCell]faasStages, []string) {
	var endpoints []string
	out := map[faasCell]faasStages{}
	for _, st := range ds.Steps(nil) {
		e := st.Params["endpoint"]
		endpoints = append(endpoints, e)
		for _, v := range ds.Variants {
			out[faasCell{v.Get("framework"), v.Get("policy"), e, v.Get("delay")}] = stagesOf(ds, v.Key(), st.Name, rep)
		}
	}
	return out, endpoints
}

// delays are the link delays measured, smallest first as the study lists
// them; one "" without a delay axis.
func delays(ds *analysis.Dataset) []string {
	if d := ds.AxisValues("delay"); len(d) > 0 {
		return d
	}
	return []string{""}
}

func (faas) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	frameworks := ds.AxisValues("framework")
	policies := ds.AxisValues("policy")
	all, endpoints := cells(ds, 0)
	ds0 := delays(ds)[0]
	breakdown, err := faasBreakdown(all, frameworks, policies, endpoints, delays(ds))
	if err != nil {
		return analysis.Result{}, err
	}
	sections := []analysis.Section{}
	intro := analysis.Section{
		Title: "How the stages are measured",
		Text: []string{
			"Each gateway answers with Server-Timing: handler (request received → response written), pre (received → RPC call sent: parsing, and the TCP dial under the dial policy), rpc (call sent → result received, at the gateway) and fn (the function's own time, reported by the RPC server). The caller's round trip is measured by msbench. " +
				"The paper's response delta (RPC result received at the gateway → response at the caller) is estimated per request as round trip − rpc − pre − half of the network time (round trip − handler), assuming the wire costs the same both ways.",
			"Policy dial opens a new TCP connection to the RPC server for every request, as the authors' code did; pooled reuses connections. The claims are judged on the dial runs, the paper's conditions; what pooled connections change is measured as the explanation.",
		},
	}
	if ds0 != "" {
		intro.Text = append(intro.Text, "Emulated links of "+strings.Join(delays(ds), ", ")+" one way put the distance of a network between the generator and the gateway and between the gateway and the RPC server (the seed's three VMs in one data centre). The claims are judged at "+ds0+", the machine's own distance; the section on link delay shows how the ranking and the delta share move with distance.")
	}
	sections = append(sections, intro, breakdown)
	if len(delays(ds)) > 1 {
		byDelay, err := faasByDelay(all, frameworks, policies, delays(ds))
		if err != nil {
			return analysis.Result{}, err
		}
		sections = append(sections, byDelay)
	}
	return analysis.Result{Sections: sections, Metrics: faasMetrics(ds, frameworks, policies, ds0)}, nil
}

// smallEndpoints are the steps where a framework's own cost could show;
// /sleep is a second of waiting that any framework hides.
var smallEndpoints = []string{"empty", "math", "image"}

// faasMetrics are the claims' metrics, one value per repetition, each from
// the variants measured side by side in that repetition.
func faasMetrics(ds *analysis.Dataset, frameworks, policies []string, delay string) map[string]claims.Metric {
	m := map[string]claims.Metric{}
	add := func(id string, x float64, mt claims.Metric) {
		if math.IsNaN(x) {
			return
		}
		mt.PerRun = append(m[id].PerRun, x)
		m[id] = mt
	}
	// addPart adds a run's value to one comparison of a conjunction, in
	// the order the parts are first met.
	addPart := func(id, label string, x float64, mt claims.Metric) {
		if math.IsNaN(x) {
			return
		}
		mt.All = m[id].All
		i := slices.IndexFunc(mt.All, func(p claims.Part) bool { return p.Label == label })
		if i < 0 {
			mt.All, i = append(mt.All, claims.Part{Label: label}), len(mt.All)
		}
		mt.All[i].PerRun = append(mt.All[i].PerRun, x)
		m[id] = mt
	}
	byRep := map[int]map[faasCell]faasStages{}
	for rep := 1; rep <= ds.Study.Repetitions; rep++ {
		byRep[rep], _ = cells(ds, rep)
	}
	for rep := 1; rep <= ds.Study.Repetitions; rep++ {
		c := byRep[rep]
		share := func(policy string, endpoints ...string) float64 {
			var xs []float64
			for _, f := range frameworks {
				for _, e := range endpoints {
					if s := c[faasCell{f, policy, e, delay}]; s.ok {
						xs = append(xs, s.deltaShr())
					}
				}
			}
			return stats.Median(xs)
		}
		for _, k := range []struct {
			id        string
			endpoints []string
		}{{"delta-share-small", []string{"empty", "math"}}, {"delta-share-image", []string{"image"}}} {
			dial, pooled := share("dial", k.endpoints...), share("pooled", k.endpoints...)
			// The delta is the handler's time after the RPC plus half the
			// network time, both parts of the round trip: a share. Their
			// difference between policies takes either sign.
			add(k.id, dial, claims.Metric{Range: &stats.Share, Note: "estimated delta / round trip, dial policy, median over frameworks"})
			add(k.id+"-dial-minus-pooled", dial-pooled, claims.Metric{Note: "delta share with a dial per request minus with pooled connections"})
		}
	}
	// Ratios over the small endpoints under both policies, each the
	// geometric mean over the same cells in every repetition (see
	// analysis.GeoMeanByRep), so that one endpoint cannot decide alone. A
	// claim about the slowest or about all being alike is every pairwise
	// ratio it implies: gin over the slowest of the others would be biased
	// (the largest of several noisy values is too large even when all are
	// equal).
	lost := map[string][]string{} // by claim: the cells its pairs left out
	pair := func(id, a, b string, of func(s faasStages) float64) []float64 {
		var cases []string
		ratios := map[string]map[int]float64{}
		for _, p := range policies {
			for _, e := range smallEndpoints {
				k := p + "/" + e
				cases, ratios[k] = append(cases, k), map[int]float64{}
				for rep, c := range byRep {
					if x, y := c[faasCell{a, p, e, delay}], c[faasCell{b, p, e, delay}]; x.ok && y.ok {
						ratios[k][rep] = of(x) / of(y)
					}
				}
			}
		}
		runs, _, left := analysis.GeoMeanByRep(cases, ratios)
		if len(left) > 0 {
			lost[id] = append(lost[id], a+"/"+b+": "+strings.Join(left, ", "))
		}
		inOrder := make([]float64, ds.Study.Repetitions) // NaN where not measured
		for rep := range inOrder {
			inOrder[rep] = math.NaN()
			if x, ok := runs[rep+1]; ok {
				inOrder[rep] = x
			}
		}
		return inOrder
	}
	p50 := func(s faasStages) float64 { return s.p50 }
	tail := func(s faasStages) float64 { return s.p99 / s.p50 }
	for i, a := range frameworks {
		for _, b := range frameworks[i+1:] {
			for _, x := range pair("framework-spread", a, b, p50) {
				addPart("framework-spread", a+"/"+b, x, claims.Metric{Ratio: true, Kind: claims.Latency,
					Note: "every pair of frameworks: one's median latency over the other's, geometric mean over the small endpoints and both policies"})
			}
		}
		if a == "gin" {
			continue
		}
		for _, x := range pair("gin-speed", "gin", a, p50) {
			addPart("gin-speed", "gin/"+a, x, claims.Metric{Ratio: true, Kind: claims.Latency,
				Note: "gin's median latency over each other framework's, geometric mean over the small endpoints and both policies"})
		}
		for _, x := range pair("gin-consistency", "gin", a, tail) {
			addPart("gin-consistency", "gin/"+a, x, claims.Metric{Ratio: true, Kind: claims.Tail,
				Note: "gin's p99/p50 over each other framework's, geometric mean over the small endpoints and both policies"})
		}
	}
	for _, x := range pair("fiber-vs-nethttp", "fiber", "nethttp", p50) {
		add("fiber-vs-nethttp", x, claims.Metric{Ratio: true, Kind: claims.Latency, Note: "fiber's median latency / net/http's, geometric mean over the small endpoints and both policies"})
	}
	for id, left := range lost {
		if mt, ok := m[id]; ok {
			mt.Note += analysis.LeftOut(left)
			m[id] = mt
		}
	}
	return m
}

func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}

// faasBreakdown splits each round trip into its stages: a table of every
// cell, and a chart per endpoint at the smallest delay (at larger ones the
// links' time only adds to the network and RPC stages).
func faasBreakdown(cells map[faasCell]faasStages, frameworks, policies, endpoints, delays []string) (analysis.Section, error) {
	sec := analysis.Section{Title: "Where the time goes"}
	table := analysis.Table{
		Caption: "Means in ms (medians over repetitions). Delta share = estimated response delta / round trip.",
		Header:  []string{"endpoint", "framework", "policy", "round trip", "network", "before RPC", "RPC transport", "function", "after RPC", "delta", "delta share", "p50", "p99"},
	}
	if delays[0] != "" {
		table.Header = append([]string{"link delay"}, table.Header...)
	}
	for _, d := range delays {
		for _, e := range endpoints {
			var cats []string
			layers := []plot.Layer{{Name: "network and framework (caller ↔ handler)"}, {Name: "before RPC (parse, dial)"}, {Name: "RPC transport"}, {Name: "function"}, {Name: "after RPC (build response)"}}
			for _, p := range policies {
				for _, f := range frameworks {
					s := cells[faasCell{f, p, e, d}]
					if !s.ok {
						continue
					}
					cats = append(cats, f+" "+p)
					for i, v := range []float64{s.network(), s.pre, s.rpcOver(), s.fn, s.after()} {
						layers[i].Values = append(layers[i].Values, max(v, 0))
					}
					row := []string{e, f, p, analysis.Num(s.roundTrip, 3), analysis.Num(s.network(), 3), analysis.Num(s.pre, 3), analysis.Num(s.rpcOver(), 3),
						analysis.Num(s.fn, 3), analysis.Num(s.after(), 3), analysis.Num(s.delta(), 3), analysis.Num(100*s.deltaShr(), 1) + "%", analysis.Num(s.p50, 3), analysis.Num(s.p99, 3)}
					if d != "" {
						row = append([]string{d}, row...)
					}
					table.Rows = append(table.Rows, row)
				}
			}
			if len(cats) == 0 || d != delays[0] {
				continue
			}
			title, caption := "/"+e+": mean time per stage", "/"+e+": the caller's mean round trip split by Server-Timing into stages."
			if d != "" {
				title += " (link delay " + d + ")"
				caption = "/" + e + ", link delay " + d + ": the caller's mean round trip split by Server-Timing into stages."
			}
			svg, err := plot.StackedBars(title, "ms per request", cats, layers, plot.Options{})
			if err != nil {
				return sec, err
			}
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: caption, SVG: svg})
		}
	}
	sec.Tables = append(sec.Tables, table)
	return sec, nil
}

// faasByDelay shows how distance changes the picture: per delay and
// policy, the frameworks from fastest to slowest (median of their p50s
// over the small endpoints), the spread between the ends, and the delta
// shares; and the same as curves against the delay.
func faasByDelay(cells map[faasCell]faasStages, frameworks, policies, delays []string) (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Ranking and response delta at each link delay",
		Text: []string{"Each link adds its delay one way to both directions of every connection it carries: the generator's requests to the gateway, and the gateway's calls to the RPC server (and, under the dial policy, the handshake of each new connection). " +
			"Ranks come from the median over /empty, /math and /image of each framework's median latency; a change of rank within the A/A noise (the noise model) is no change."},
	}
	table := analysis.Table{
		Caption: "Per link delay and policy: frameworks fastest first (median latency in ms, median over the small endpoints), slowest/fastest, and the delta share (median over frameworks).",
		Header:  []string{"link delay", "policy", "ranking, fastest first", "slowest / fastest", "delta share /empty,/math", "delta share /image"},
	}
	var p50Series, shareSeries []plot.XYSeries
	for _, p := range policies {
		for _, f := range frameworks {
			p50Series = append(p50Series, plot.XYSeries{Name: f + " " + p, Points: true})
			shareSeries = append(shareSeries, plot.XYSeries{Name: f + " " + p, Points: true})
		}
	}
	for _, d := range delays {
		ms, err := linksDelayMs(d)
		if err != nil {
			return sec, err
		}
		k := 0
		for _, p := range policies {
			type ranked struct {
				name string
				p50  float64
			}
			var rank []ranked
			var small, image []float64
			for _, f := range frameworks {
				var p50s, shares []float64
				for _, e := range smallEndpoints {
					if s := cells[faasCell{f, p, e, d}]; s.ok {
						p50s = append(p50s, s.p50)
						if e == "image" {
							image = append(image, s.deltaShr())
						} else {
							small = append(small, s.deltaShr())
							shares = append(shares, s.deltaShr())
						}
					}
				}
				y, share := medianOrNaN(p50s), medianOrNaN(shares)
				p50Series[k].X, p50Series[k].Y = append(p50Series[k].X, ms), append(p50Series[k].Y, y)
				shareSeries[k].X, shareSeries[k].Y = append(shareSeries[k].X, ms), append(shareSeries[k].Y, 100*share)
				k++
				if !math.IsNaN(y) {
					rank = append(rank, ranked{f, y})
				}
			}
			if len(rank) == 0 {
				continue
			}
			slices.SortFunc(rank, func(a, b ranked) int { return cmp.Compare(a.p50, b.p50) })
			names := make([]string, len(rank))
			for i, r := range rank {
				names[i] = r.name + " " + analysis.Num(r.p50, 3)
			}
			table.Rows = append(table.Rows, []string{d, p, strings.Join(names, " < "), analysis.Num(rank[len(rank)-1].p50/rank[0].p50, 3),
				analysis.Num(100*medianOrNaN(small), 1) + "%", analysis.Num(100*medianOrNaN(image), 1) + "%"})
		}
	}
	sec.Tables = append(sec.Tables, table)
	for _, c := range []struct {
		title, y string
		series   []plot.XYSeries
	}{
		{"Median latency against link delay", "median latency, ms (median over /empty, /math, /image)", p50Series},
		{"Response delta share against link delay", "delta share of the round trip, % (/empty, /math)", shareSeries},
	} {
		svg, err := plot.Lines(c.title, "link delay one way, ms", c.y, c.series, plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: c.title + ", per framework and policy.", SVG: svg})
	}
	return sec, nil
}

// linksDelayMs reads a delay axis value such as 0.5ms.
func linksDelayMs(d string) (float64, error) {
	v, err := links.ParseDuration(d)
	if err != nil {
		return 0, fmt.Errorf("delay axis value %q: %w", d, err)
	}
	return float64(v.Nanoseconds()) / 1e6, nil
}
