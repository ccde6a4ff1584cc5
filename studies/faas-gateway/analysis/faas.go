// Package faasgateway is the faas-gateway study's analysis: where the
// time of a function call behind an HTTP gateway goes, and the paper's
// five claims about it.
package faasgateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
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

func stagesOf(ds *analysis.Dataset, variant, step string) faasStages {
	if len(ds.Units(variant, step)) == 0 {
		return faasStages{}
	}
	med := func(f func(u *analysis.Unit) float64) float64 {
		m, _ := ds.Median(variant, step, f)
		return m
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
		p50:       med(func(u *analysis.Unit) float64 { return u.Summary.Latency.P50 }),
		p99:       med(func(u *analysis.Unit) float64 { return u.Summary.Latency.P99 }),
		ok:        true,
	}
}

// faasCell indexes the measurements by framework, policy and endpoint.
type faasCell struct{ framework, policy, endpoint string }

func (faas) Analyze(ds *analysis.Dataset) ([]analysis.Section, error) {
	frameworks := ds.AxisValues("framework")
	policies := ds.AxisValues("policy")
	var endpoints []string
	cells := map[faasCell]faasStages{}
	for _, st := range ds.Steps(nil) {
		e := st.Params["endpoint"]
		endpoints = append(endpoints, e)
		for _, v := range ds.Variants {
			cells[faasCell{v.Get("framework"), v.Get("policy"), e}] = stagesOf(ds, v.Key(), st.Name)
		}
	}
	claims := faasClaims(cells, frameworks, policies)
	breakdown, err := faasBreakdown(cells, frameworks, policies, endpoints)
	if err != nil {
		return nil, err
	}
	intro := analysis.Section{
		Title: "The paper's claims",
		Text: []string{
			"Each gateway answers with Server-Timing: handler (request received → response written), pre (received → RPC call sent: parsing, and the TCP dial under the dial policy), rpc (call sent → result received, at the gateway) and fn (the function's own time, reported by the RPC server). The caller's round trip is measured by msbench. " +
				"The paper's response delta (RPC result received at the gateway → response at the caller) is estimated per request as round trip − rpc − pre − half of the network time (round trip − handler), assuming the wire costs the same both ways.",
			"Policy dial opens a new TCP connection to the RPC server for every request, as the authors' code did; pooled reuses connections. Verdicts compare the dial runs with the paper first and then say what the pooled runs change.",
		},
		Claims: claims,
	}
	return []analysis.Section{intro, breakdown}, nil
}

func faasBreakdown(cells map[faasCell]faasStages, frameworks, policies, endpoints []string) (analysis.Section, error) {
	sec := analysis.Section{Title: "Where the time goes"}
	table := analysis.Table{
		Caption: "Means in ms (medians over repetitions). Delta share = estimated response delta / round trip.",
		Header:  []string{"endpoint", "framework", "policy", "round trip", "network", "before RPC", "RPC transport", "function", "after RPC", "delta", "delta share", "p50", "p99"},
	}
	for _, e := range endpoints {
		var cats []string
		layers := []plot.Layer{{Name: "network and framework (caller ↔ handler)"}, {Name: "before RPC (parse, dial)"}, {Name: "RPC transport"}, {Name: "function"}, {Name: "after RPC (build response)"}}
		for _, p := range policies {
			for _, f := range frameworks {
				s := cells[faasCell{f, p, e}]
				if !s.ok {
					continue
				}
				cats = append(cats, f+" "+p)
				for i, v := range []float64{s.network(), s.pre, s.rpcOver(), s.fn, s.after()} {
					layers[i].Values = append(layers[i].Values, max(v, 0))
				}
				table.Rows = append(table.Rows, []string{e, f, p, analysis.Num(s.roundTrip, 3), analysis.Num(s.network(), 3), analysis.Num(s.pre, 3), analysis.Num(s.rpcOver(), 3),
					analysis.Num(s.fn, 3), analysis.Num(s.after(), 3), analysis.Num(s.delta(), 3), analysis.Num(100*s.deltaShr(), 1) + "%", analysis.Num(s.p50, 3), analysis.Num(s.p99, 3)})
			}
		}
		if len(cats) == 0 {
			continue
		}
		svg, err := plot.StackedBars("/"+e+": mean time per stage", "ms per request", cats, layers, plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: "/" + e + ": the caller's mean round trip split by Server-Timing into stages.", SVG: svg})
	}
	sec.Tables = append(sec.Tables, table)
	return sec, nil
}

func faasClaims(cells map[faasCell]faasStages, frameworks, policies []string) []analysis.Claim {
	shares := func(policy string, endpoints ...string) []float64 {
		var out []float64
		for _, f := range frameworks {
			for _, e := range endpoints {
				if s := cells[faasCell{f, policy, e}]; s.ok {
					out = append(out, s.deltaShr())
				}
			}
		}
		return out
	}
	shareClaim := func(text, published string, threshold float64, endpoints ...string) analysis.Claim {
		c := analysis.Claim{Text: text, Published: published}
		dial, pooled := shares("dial", endpoints...), shares("pooled", endpoints...)
		if len(dial)+len(pooled) == 0 {
			c.Verdict, c.Why = analysis.Undecided, "no run of "+strings.Join(endpoints, ", ")
			return c
		}
		c.Measured = fmt.Sprintf("delta share, median over frameworks: dial %s, pooled %s", analysis.Pct(stats.Median(dial)), analysis.Pct(stats.Median(pooled)))
		dialOK, pooledOK := stats.Median(dial) >= threshold, stats.Median(pooled) >= threshold
		switch {
		case len(dial) == 0:
			c.Verdict, c.Why = analysis.VerdictOf(pooledOK), "only pooled connections were measured"
		case dialOK && (pooledOK || len(pooled) == 0):
			c.Verdict, c.Why = analysis.Reproduced, "the share passes the paper's threshold with either connection policy"
		case dialOK:
			c.Verdict, c.Why = analysis.Explained, "with a connection per request the share passes the threshold; pooled connections bring it under, so much of the delta is connection handling, not the framework"
		default:
			c.Verdict, c.Why = analysis.NotReproduced, "the estimated delta stays under the threshold even with a connection per request"
		}
		return c
	}
	var claims []analysis.Claim
	claims = append(claims,
		shareClaim("The response delta is at least one third of the round trip for small workloads.", "≥ 33% (/empty, /math)", 1.0/3, "empty", "math"),
		shareClaim("The response delta is over two thirds of the round trip for /image.", "> 67% (/image)", 2.0/3, "image"))
	claims = append(claims, spreadClaim(cells, frameworks, policies), ginClaim(cells, frameworks, policies), fiberClaim(cells, policies))
	return claims
}

// smallEndpoints are the steps where a framework's own cost could show;
// /sleep is a second of waiting that any framework hides.
var smallEndpoints = []string{"empty", "math", "image"}

func spreadClaim(cells map[faasCell]faasStages, frameworks, policies []string) analysis.Claim {
	c := analysis.Claim{Text: "Differences between frameworks are minimal.", Published: "minimal (no figure given)"}
	worst, where := 0.0, ""
	var parts []string
	for _, p := range policies {
		for _, e := range smallEndpoints {
			var p50s []float64
			for _, f := range frameworks {
				if s := cells[faasCell{f, p, e}]; s.ok {
					p50s = append(p50s, s.p50)
				}
			}
			if len(p50s) < 2 {
				continue
			}
			spread := slices.Max(p50s) / slices.Min(p50s)
			parts = append(parts, fmt.Sprintf("%s/%s %.2f×", e, p, spread))
			if spread > worst {
				worst, where = spread, e+" "+p
			}
		}
	}
	if len(parts) == 0 {
		c.Verdict, c.Why = analysis.Undecided, "fewer than two frameworks measured"
		return c
	}
	c.Measured = "slowest/fastest p50: " + strings.Join(parts, ", ")
	if worst <= 1.25 {
		c.Verdict, c.Why = analysis.Reproduced, "every framework's median is within 25% of the fastest"
	} else {
		c.Verdict, c.Why = analysis.NotReproduced, fmt.Sprintf("up to %.2f× between frameworks (%s)", worst, where)
	}
	return c
}

func ginClaim(cells map[faasCell]faasStages, frameworks, policies []string) analysis.Claim {
	c := analysis.Claim{Text: "Gin is the worst in speed and consistency.", Published: "Gin slowest and least consistent"}
	if !slices.Contains(frameworks, "gin") {
		c.Verdict, c.Why = analysis.Undecided, "gin was not measured"
		return c
	}
	slowest, leastConsistent := map[string]int{}, map[string]int{}
	n := 0
	for _, p := range policies {
		for _, e := range smallEndpoints {
			var bestP50, bestSpread string
			var p50, spread float64
			for _, f := range frameworks {
				s := cells[faasCell{f, p, e}]
				if !s.ok {
					continue
				}
				if s.p50 > p50 {
					p50, bestP50 = s.p50, f
				}
				if r := s.p99 / s.p50; r > spread {
					spread, bestSpread = r, f
				}
			}
			if bestP50 != "" {
				n++
				slowest[bestP50]++
				leastConsistent[bestSpread]++
			}
		}
	}
	c.Measured = fmt.Sprintf("slowest p50 in %d of %d endpoint×policy cases (most often %s); widest p99/p50 in %d (most often %s)",
		slowest["gin"], n, mostOften(slowest), leastConsistent["gin"], mostOften(leastConsistent))
	switch {
	case n == 0:
		c.Verdict, c.Why = analysis.Undecided, "no endpoint measured"
	case slowest["gin"]*2 > n && leastConsistent["gin"]*2 > n:
		c.Verdict, c.Why = analysis.Reproduced, "gin is slowest and least consistent in most cases"
	default:
		c.Verdict, c.Why = analysis.NotReproduced, "gin is not the worst in most cases"
	}
	return c
}

func fiberClaim(cells map[faasCell]faasStages, policies []string) analysis.Claim {
	c := analysis.Claim{Text: "Fiber gives no notable boost.", Published: "no notable gain over the others"}
	var ratios []string
	boosts := 0
	n := 0
	for _, p := range policies {
		for _, e := range smallEndpoints {
			fib, base := cells[faasCell{"fiber", p, e}], cells[faasCell{"nethttp", p, e}]
			if !fib.ok || !base.ok {
				continue
			}
			n++
			r := fib.p50 / base.p50
			ratios = append(ratios, fmt.Sprintf("%s/%s %.2f×", e, p, r))
			if r < 0.9 {
				boosts++
			}
		}
	}
	if n == 0 {
		c.Verdict, c.Why = analysis.Undecided, "fiber and net/http were not both measured"
		return c
	}
	c.Measured = "fiber p50 / net/http p50: " + strings.Join(ratios, ", ")
	if boosts*2 > n {
		c.Verdict, c.Why = analysis.NotReproduced, "fiber's median is more than 10% under net/http's in most cases"
	} else {
		c.Verdict, c.Why = analysis.Reproduced, "fiber's median is within 10% of net/http's or slower in most cases"
	}
	return c
}

func mostOften(m map[string]int) string {
	best, n := "", 0
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > n {
			best, n = k, m[k]
		}
	}
	return best
}
