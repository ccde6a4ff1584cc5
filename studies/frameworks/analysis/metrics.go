package frameworks

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"
)

// Per-unit values from the summary and the resources.
var (
	p50 = analysis.Of(summarymetric.P50)
	p95 = analysis.Of(summarymetric.P95)
)

func tail(u *analysis.Unit) float64 { return p95(u) / p50(u) }

// cpuS is the user + system CPU time of every process of the deployment
// during the step, the registry included.
func cpuS(u *analysis.Unit) float64 {
	var s float64
	for _, p := range u.Resources.Services {
		s += p.CPUUserS + p.CPUSysS
	}
	if len(u.Resources.Services) == 0 {
		return analysis.NaN
	}
	return s
}

// cpuPerRequestMs is cpuS over the requests sent in the step, in ms.
func cpuPerRequestMs(u *analysis.Unit) float64 {
	if u.Summary.Requests == 0 {
		return analysis.NaN
	}
	return 1000 * cpuS(u) / float64(u.Summary.Requests)
}

// memMiB is the sum of every process's peak memory during the step: the
// deployment's footprint as the sum of its containers' peaks (at least
// the peak of the sum, since the processes need not peak together).
func memMiB(u *analysis.Unit) float64 {
	var b int64
	for _, p := range u.Resources.Services {
		b += p.PeakMemBytes
	}
	if len(u.Resources.Services) == 0 {
		return analysis.NaN
	}
	return float64(b) / (1 << 20)
}

// serviceCPU and serviceMem are one service's CPU seconds and peak MiB
// (its instances summed), NaN when the step recorded nothing for it.
func serviceCPU(name string) func(u *analysis.Unit) float64 {
	return func(u *analysis.Unit) float64 {
		s, found := 0.0, false
		for _, p := range u.Resources.Services {
			if p.Service == name {
				s, found = s+p.CPUUserS+p.CPUSysS, true
			}
		}
		if !found {
			return analysis.NaN
		}
		return s
	}
}

func serviceMem(name string) func(u *analysis.Unit) float64 {
	return func(u *analysis.Unit) float64 {
		var b int64
		found := false
		for _, p := range u.Resources.Services {
			if p.Service == name {
				b, found = b+p.PeakMemBytes, true
			}
		}
		if !found {
			return analysis.NaN
		}
		return float64(b) / (1 << 20)
	}
}

// metricIDs are the metrics claims.yaml may judge on.
func metricIDs() []string {
	return []string{
		"p50-nest-vs-best-other", "p50-spring-vs-micro", "p50-micro-vs-slowest-other",
		"p95-over-p50-spring-hello-low", "p95-over-p50-spring-universities-low",
		"steady-tail-spring-hello-low", "steady-tail-spring-universities-low",
		"warmup-spring-hello", "warmup-spring-vs-others-hello",
		"p50-micro-vs-spring-hello-low", "p50-micro-vs-nest-hello-low", "p50-micro-vs-nest-hello-high",
		"p50-micro-universities-high", "p50-micro-vs-nest-universities-high",
		"mem-nest-vs-best-other", "mem-nest-vs-spring", "mem-nest-vs-micro",
		"cpu-micro-vs-most-other", "cpu-micro-vs-spring-high", "cpu-per-request-nest-vs-best-other",
		"success-pause-micro-hello-high", "success-pause-spring-universities-high", "success-pause-micro-universities-high",
		"success-200-spring-universities-high",
		"parsing-p50-universities-low", "parsing-cpu-per-request-universities-high",
		"p50-micro-vs-nest-universities-high-startup",
	}
}

// runs is f of a framework with a loading in one step, by repetition;
// empty when the run has not that variant or step.
func (r *fwRun) runs(fw, load string, c *fcase, f func(u *analysis.Unit) float64) map[int]float64 {
	k := r.key(fw, load)
	if c == nil || k == "" {
		return map[int]float64{}
	}
	return r.ds.PerRun(k, c.step.Name, f)
}

// authors is runs with the framework's authors' loading.
func (r *fwRun) authors(fw string, c *fcase, f func(u *analysis.Unit) float64) map[int]float64 {
	return r.runs(fw, authorsLoad[fw], c, f)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// across combines, repetition by repetition, values measured side by side
// in it: only repetitions that measured all count, and a combination that
// is not a finite number is left out.
func across(combine func(xs []float64) float64, ms ...map[int]float64) map[int]float64 {
	out := map[int]float64{}
	if len(ms) == 0 {
		return out
	}
	for rep := range ms[0] {
		xs := make([]float64, len(ms))
		ok := true
		for i, m := range ms {
			x, has := m[rep]
			if !has || !finite(x) {
				ok = false
				break
			}
			xs[i] = x
		}
		if !ok {
			continue
		}
		if y := combine(xs); finite(y) {
			out[rep] = y
		}
	}
	return out
}

// byRep lists per-repetition values in repetition order.
func byRep(m map[int]float64) []float64 {
	var out []float64
	for _, rep := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[rep])
	}
	return out
}

// ratio is a/b.
func ratio(xs []float64) float64 { return xs[0] / xs[1] }

// pairwise are the comparisons a claim that fw is ahead everywhere
// implies: fw's f over each other framework's, with their authors'
// loading, in every step of cases that measured it, by repetition, named
// "fw/other step"; nil when none was measured. A claim about the fastest or the leanest is all of
// them at once (a conjunction): fw over the best of the others would be
// biased, the best of several noisy values being too good even when all
// are equal.
func (r *fwRun) pairwise(cases []*fcase, fw string, others []string, f func(u *analysis.Unit) float64) []claims.Part {
	var parts []claims.Part
	measured := false
	for _, c := range cases {
		for _, o := range others {
			// A comparison not measured stays, empty: the claim cannot
			// hold over a rival it was never compared with.
			runs := byRep(across(ratio, r.authors(fw, c, f), r.authors(o, c, f)))
			parts = append(parts, claims.Part{Label: fw + "/" + o + " " + c.label(), PerRun: runs})
			measured = measured || len(runs) > 0
		}
	}
	if !measured {
		return nil
	}
	return parts
}

// geoMeanCases is, repetition by repetition, the geometric mean of a
// per-step ratio over the steps that measured it, the same steps in every
// repetition (analysis.GeoMeanByRep), and those steps' labels.
func (r *fwRun) geoMeanCases(cases []*fcase, per func(c *fcase) map[int]float64) (map[int]float64, []string) {
	var labels []string
	ratios := map[string]map[int]float64{}
	for _, c := range cases {
		labels = append(labels, c.label())
		ratios[c.label()] = per(c)
	}
	out, used, _ := analysis.GeoMeanByRep(labels, ratios)
	return out, used
}

// authorsVariants names the variants the claims compare.
func authorsVariants() string {
	var out []string
	for _, fw := range frameworkOrder {
		out = append(out, fw+"-"+authorsLoad[fw])
	}
	return strings.Join(out, ", ")
}

// metrics are the claims' metrics, one value per repetition, each from
// variants measured side by side in it: each framework with its authors'
// loading unless the metric says otherwise.
func (r *fwRun) metrics() map[string]claims.Metric {
	m := map[string]claims.Metric{}
	put := func(id string, runs map[int]float64, mt claims.Metric) {
		maps.DeleteFunc(runs, func(_ int, x float64) bool { return !finite(x) })
		if len(runs) > 0 {
			mt.PerRun = byRep(runs)
			m[id] = mt
		}
	}
	putRatio := func(id string, runs map[int]float64, note string) {
		put(id, runs, claims.Metric{Ratio: true, Unit: "×", Note: note})
	}
	// A value's interval is kept in rng, so a share's never leaves 0 to 1.
	putValue := func(id string, runs map[int]float64, unit string, rng stats.Range, note string) {
		put(id, runs, claims.Metric{Unit: unit, Range: &rng, Note: note})
	}
	steps := func(used []string) string { return " (" + strings.Join(used, ", ") + ")" }
	pr := r.fromRecords
	latency := func(id string, runs map[int]float64, note string) {
		put(id, runs, claims.Metric{Ratio: true, Kind: claims.Latency, Unit: "×", Note: note})
	}
	// A tail over the median of one deployment: one deployment's noise.
	tailOf := func(id string, runs map[int]float64, note string) {
		put(id, runs, claims.Metric{Ratio: true, Kind: claims.Tail, Deployments: 1, Unit: "×", Note: note})
	}

	putAll := func(id string, parts []claims.Part, kind claims.Kind, note string) {
		if len(parts) > 0 {
			m[id] = claims.Metric{All: parts, Ratio: true, Kind: kind, Unit: "×", Note: note}
		}
	}
	everyStep := "; every step that measured both, each a comparison; " + authorsVariants()
	putAll("p50-nest-vs-best-other", r.pairwise(r.cases, nest, []string{spring, micro}, p50), claims.Latency, "nest's median / spring's and / micro's"+everyStep)
	putAll("p50-spring-vs-micro", r.pairwise(r.cases, spring, []string{micro}, p50), claims.Latency, "spring's median / micro's"+everyStep)
	putAll("p50-micro-vs-slowest-other", r.pairwise(r.cases, micro, []string{spring, nest}, p50), claims.Latency, "micro's median / spring's and / nest's"+everyStep)
	for _, app := range apps {
		c := r.at(app, low)
		tailOf("p95-over-p50-spring-"+app+"-low", r.authors(spring, c, tail), "spring-"+perRequest+" p95 / p50, every request of the "+app+" low-load step")
		tailOf("steady-tail-spring-"+app+"-low", r.authors(spring, c, pr(steadyTail)),
			fmt.Sprintf("spring-%s p95 / p50 of the %s low-load step without its first %d requests", perRequest, app, firstN))
	}
	if c := r.first[hello]; c != nil {
		note := fmt.Sprintf("median of the first %d requests / of the rest, %s, the first hello step after the start", firstN, c.step.Name)
		putRatio("warmup-spring-hello", r.authors(spring, c, pr(warmup)), "spring-"+perRequest+" "+note)
		putAll("warmup-spring-vs-others-hello", r.pairwise([]*fcase{c}, spring, []string{nest, micro}, pr(warmup)), "", "spring's warm-up ratio / nest's and / micro's; "+note)
	}

	helloLow, helloHigh, uniHigh := r.at(hello, low), r.at(hello, high), r.at(universities, high)
	latency("p50-micro-vs-spring-hello-low", across(ratio, r.authors(micro, helloLow, p50), r.authors(spring, helloLow, p50)), "micro / spring median, hello, low load")
	latency("p50-micro-vs-nest-hello-low", across(ratio, r.authors(micro, helloLow, p50), r.authors(nest, helloLow, p50)), "micro / nest median, hello, low load")
	latency("p50-micro-vs-nest-hello-high", across(ratio, r.authors(micro, helloHigh, p50), r.authors(nest, helloHigh, p50)), "micro / nest median, hello, high load")
	put("p50-micro-universities-high", r.authors(micro, uniHigh, p50), claims.Metric{Kind: claims.Latency, Unit: "ms", Range: &stats.NonNegative, Note: "micro-" + perRequest + " median, universities, high load"})
	latency("p50-micro-vs-nest-universities-high", across(ratio, r.authors(micro, uniHigh, p50), r.authors(nest, uniHigh, p50)), "micro-"+perRequest+" / nest-"+atStart+" median, universities, high load")
	latency("p50-micro-vs-nest-universities-high-startup", across(ratio, r.runs(micro, atStart, uniHigh, p50), r.runs(nest, atStart, uniHigh, p50)),
		"micro-"+atStart+" / nest-"+atStart+" median, universities, high load: both read the dataset once at start")

	putAll("mem-nest-vs-best-other", r.pairwise(r.cases, nest, []string{spring, micro}, memMiB), claims.Memory, "nest's memory (sum of its processes' peaks) / spring's and / micro's"+everyStep)
	for _, o := range []string{spring, micro} {
		runs, used := r.geoMeanCases(r.cases, func(c *fcase) map[int]float64 {
			return across(ratio, r.authors(nest, c, memMiB), r.authors(o, c, memMiB))
		})
		put("mem-nest-vs-"+o, runs, claims.Metric{Ratio: true, Kind: claims.Memory, Unit: "×", Note: "nest's memory / " + o + "'s (sums of the processes' peaks), geometric mean over the steps" + steps(used)})
	}
	putAll("cpu-micro-vs-most-other", r.pairwise(r.cases, micro, []string{spring, nest}, cpuS), claims.CPU, "micro's CPU time (every process, the step) / spring's and / nest's"+everyStep)
	var highs []*fcase
	for _, c := range r.cases {
		if c.level == high {
			highs = append(highs, c)
		}
	}
	putAll("cpu-micro-vs-spring-high", r.pairwise(highs, micro, []string{spring}, cpuS), claims.CPU, "micro's CPU time / spring's, in each high-load step"+everyStep)
	putAll("cpu-per-request-nest-vs-best-other", r.pairwise(r.cases, nest, []string{spring, micro}, cpuPerRequestMs), claims.CPU, "nest's CPU ms per request / spring's and / micro's"+everyStep)

	for _, s := range []struct {
		fw, app string
	}{{micro, hello}, {spring, universities}, {micro, universities}} {
		c := r.at(s.app, high)
		putValue("success-pause-"+s.fw+"-"+s.app+"-high", r.authors(s.fw, c, pr(sharePause)), "share", stats.Share,
			s.fw+"-"+authorsLoad[s.fw]+": share of requests answered 200 within the pause (k6's success), "+s.app+", high load")
	}
	putValue("success-200-spring-universities-high", r.authors(spring, uniHigh, pr(share200)), "share", stats.Share, "spring-"+perRequest+": share of requests answered 200 at all, universities, high load")

	// Parsing per request costs in every framework: per request over at
	// start of each framework, each a comparison.
	parsing := func(c *fcase, f func(u *analysis.Unit) float64) []claims.Part {
		var parts []claims.Part
		for _, fw := range frameworkOrder {
			if q := across(ratio, r.runs(fw, perRequest, c, f), r.runs(fw, atStart, c, f)); len(q) > 0 {
				parts = append(parts, claims.Part{Label: fw, PerRun: byRep(q)})
			}
		}
		return parts
	}
	if c := r.at(universities, low); c != nil {
		putAll("parsing-p50-universities-low", parsing(c, p50), claims.Latency, "median with the dataset parsed per request / read at start, universities, low load, each framework a comparison")
	}
	if uniHigh != nil {
		putAll("parsing-cpu-per-request-universities-high", parsing(uniHigh, cpuPerRequestMs), claims.CPU, "CPU ms per request with the dataset parsed per request / read at start, universities, high load, each framework a comparison")
	}
	return m
}
