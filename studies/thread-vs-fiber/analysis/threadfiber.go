// Package threadvsfiber is the thread-vs-fiber study's analysis: the
// paper's one-client latency against size, the T_r + T_p + T_f split, the
// concurrency sweep, and start-up apart from steady state.
package threadvsfiber

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("thread-vs-fiber", threadVsFiber{}) }

type threadVsFiber struct{}

// The values of the impl axis, in the order charts give them colours.
const (
	tfGin      = "gin"
	tfPlatform = "spring-platform"
	tfVirtual  = "spring-virtual"
)

var tfFormats = []string{"png", "jpg"}

var (
	sequentialSteps = map[string]string{"kind": "sequential"}
	concurrentSteps = map[string]string{"kind": "concurrent"}
)

func (threadVsFiber) Needs() study.Needs {
	return study.Needs{
		Axes: []string{"impl"},
		Steps: []study.StepNeed{
			{Where: sequentialSteps, Params: []string{"op", "format", "size"}, For: "latency against size, one client at a time"},
			{Where: concurrentSteps, Params: []string{"op", "format", "size", "users"}, For: "throughput and tail against the number of clients"},
		},
		Metrics: []string{"spring-platform-vs-gin", "spring-virtual-vs-gin", "gin-uploads-vs-spring-most-clients"},
	}
}

// paperSizes are the sizes the paper measured, in KB, as named in the corpus.
var paperSizes = map[string]float64{"0017k": 17, "0030k": 30, "0040k": 40, "0050k": 50, "0065k": 65, "0090k": 90, "0110k": 110, "0120k": 120, "0128k": 128}

// sizeKB reads a corpus size name (0128k, 1m) as KB.
func sizeKB(name string) (float64, bool) {
	if n, ok := strings.CutSuffix(name, "k"); ok {
		v, err := strconv.ParseFloat(n, 64)
		return v, err == nil
	}
	if n, ok := strings.CutSuffix(name, "m"); ok {
		v, err := strconv.ParseFloat(n, 64)
		return v * 1000, err == nil
	}
	return 0, false
}

// tfStep is a step's parameters as the analysis uses them.
type tfStep struct {
	name, op, format, size string
	users                  int
	kb                     float64
}

// tfSteps reads the steps of one kind; a size or client count that is not
// a number is an error in the study file the analysis reports.
func tfSteps(ds *analysis.Dataset, where map[string]string) ([]tfStep, error) {
	var out []tfStep
	for _, st := range ds.Steps(where) {
		kb, ok := sizeKB(st.Params["size"])
		if !ok {
			return nil, fmt.Errorf("step %s: size %q is not a corpus size such as 0128k or 1m", st.Name, st.Params["size"])
		}
		users := 1
		if u, set := st.Params["users"]; set {
			n, err := strconv.Atoi(u)
			if err != nil {
				return nil, fmt.Errorf("step %s: users %q is not a count", st.Name, u)
			}
			users = n
		}
		out = append(out, tfStep{name: st.Name, op: st.Params["op"], format: st.Params["format"], size: st.Params["size"], users: users, kb: kb})
	}
	return out, nil
}

func (threadVsFiber) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	seq, err := tfSteps(ds, sequentialSteps)
	if err != nil {
		return analysis.Result{}, err
	}
	conc, err := tfSteps(ds, concurrentSteps)
	if err != nil {
		return analysis.Result{}, err
	}
	// Charts and tables name variants by implementation; with the single
	// impl axis that is the variant's key.
	variants := ds.AxisValues("impl")
	p50 := func(variant, step string) (float64, bool) {
		return ds.Median(variant, step, analysis.Of(summarymetric.P50))
	}
	stepName := func(s tfStep) string { return s.name }

	intro := analysis.Section{
		Title: "What is compared",
		Text: []string{
			"The paper timed one request at a time from a front end: the thread model (Spring, a platform thread per request) 4× to 8.5× slower than the fiber model (Gin, goroutines), 6.25× on average, over images of 17 KB to 128 KB. " +
				"Here the same Spring Boot jar runs on platform threads and on JDK virtual threads, beside Gin, all against the same private Postgres; latency is the median upload round trip (T_r + T_p + T_f) with one client.",
		},
	}
	sections := []analysis.Section{intro}
	sections = append(sections, tfSizeSection(ds, seq, variants, p50, stepName))
	if split := tfSplitSection(ds, seq, variants, stepName); len(split.Tables) > 0 {
		sections = append(sections, split)
	}
	if len(conc) > 0 {
		sections = append(sections, tfConcurrencySection(ds, conc, variants))
	}
	startup, err := tfStartupSection(ds, seq, variants)
	if err != nil {
		return analysis.Result{}, err
	}
	sections = append(sections, startup)
	return analysis.Result{Sections: sections, Metrics: tfMetrics(ds, seq, conc)}, nil
}

// tfMetrics are the claims' metrics, one value per repetition: the
// geometric mean over the paper's sizes and both formats of a Spring
// variant's median upload latency over Gin's, measured in the same
// repetition; and with the most clients, Gin's uploads per second over
// each Spring variant's.
func tfMetrics(ds *analysis.Dataset, seq, conc []tfStep) map[string]claims.Metric {
	m := map[string]claims.Metric{}
	var paperUploads, mostUploads []tfStep
	for _, s := range seq {
		if _, paper := paperSizes[s.size]; s.op == "post" && paper {
			paperUploads = append(paperUploads, s)
		}
	}
	p50 := analysis.Of(summarymetric.P50)
	for _, spring := range []string{tfPlatform, tfVirtual} {
		if perRun, kept, lost := geoMeanRatios(ds, paperUploads, spring, tfGin, p50); len(perRun) > 0 {
			m[spring+"-vs-gin"] = claims.Metric{PerRun: perRun, Ratio: true, Kind: claims.Latency,
				Note: fmt.Sprintf("%s / gin median upload latency, one client, geometric mean over %d size × format cases", spring, len(kept)) + analysis.LeftOut(lost)}
		}
	}
	most := 0
	for _, s := range conc {
		most = max(most, s.users)
	}
	for _, s := range conc {
		if s.users == most && s.op == "post" {
			mostUploads = append(mostUploads, s)
		}
	}
	// Goroutines ahead of Spring is gin over each Spring variant (a
	// conjunction): over the better of the two it would be biased, the
	// better of two noisy values being too good even when they are equal.
	// A variant not measured keeps its comparison, empty.
	tput := analysis.Of(summarymetric.Throughput)
	ahead := claims.Metric{Ratio: true, Kind: claims.Throughput, Unit: "×",
		Note: fmt.Sprintf("gin uploads/s / each Spring variant's, %d clients, geometric mean over the upload steps", most)}
	measured := false
	for _, spring := range []string{tfPlatform, tfVirtual} {
		perRun, _, lost := geoMeanRatios(ds, mostUploads, tfGin, spring, tput)
		ahead.All = append(ahead.All, claims.Part{Label: tfGin + "/" + spring, PerRun: perRun})
		measured = measured || len(perRun) > 0
		if len(lost) > 0 {
			ahead.Note += " (" + tfGin + "/" + spring + analysis.LeftOut(lost) + ")"
		}
	}
	if measured {
		m["gin-uploads-vs-spring-most-clients"] = ahead
	}
	return m
}

// geoMeanRatios is, per repetition in order, the geometric mean over the
// steps of a's f over b's, each pair measured side by side in that
// repetition, and over the same steps in every repetition
// (analysis.GeoMeanByRep): kept and lost name them.
func geoMeanRatios(ds *analysis.Dataset, steps []tfStep, a, b string, f func(u *analysis.Unit) float64) (perRun []float64, kept, lost []string) {
	var names []string
	ratios := map[string]map[int]float64{}
	for _, s := range steps {
		names, ratios[s.name] = append(names, s.name), map[int]float64{}
		other := ds.PerRun(b, s.name, f)
		for rep, x := range ds.PerRun(a, s.name, f) {
			if y, ok := other[rep]; ok {
				ratios[s.name][rep] = x / y
			}
		}
	}
	byRep, kept, lost := analysis.GeoMeanByRep(names, ratios)
	for _, rep := range slices.Sorted(maps.Keys(byRep)) {
		perRun = append(perRun, byRep[rep])
	}
	return perRun, kept, lost
}

func tfSizeSection(ds *analysis.Dataset, seq []tfStep, variants []string, p50 func(string, string) (float64, bool), name func(tfStep) string) analysis.Section {
	sec := analysis.Section{Title: "Latency against image size (one client)"}
	var figures map[string]claims.Figure
	if ds.Claims != nil {
		figures = ds.Claims.Figures
	}
	for _, op := range []string{"post", "fetch"} {
		for _, f := range tfFormats {
			var series []plot.XYSeries
			for _, v := range variants {
				xy := plot.XYSeries{Name: v, Points: true}
				for _, s := range seq {
					if s.op != op || s.format != f {
						continue
					}
					if m, ok := p50(v, name(s)); ok {
						xy.X, xy.Y = append(xy.X, s.kb), append(xy.Y, m)
					}
				}
				if len(xy.X) > 0 {
					series = append(series, xy)
				}
			}
			if op == "post" {
				for _, who := range []struct{ paper, like string }{{"spring", tfPlatform}, {"gin", tfGin}} {
					if xy := paperCurve(figures["latency-"+who.paper], who.paper); len(xy.X) > 0 {
						xy.Like = who.like
						series = append(series, xy)
					}
				}
			}
			if len(series) == 0 {
				continue
			}
			svg, err := plot.Lines(fmt.Sprintf("%s %s: median latency by size", strings.ToUpper(op), strings.ToUpper(f)), "image size (KB)", "median latency (ms)", series, plot.Options{LogX: true, LogY: true})
			if err != nil {
				sec.Text = append(sec.Text, "plot unavailable: "+err.Error())
				continue
			}
			caption := "One client, one request at a time; median over repetitions."
			if op == "post" {
				caption += " Dashed: the paper's published figures (its Spring and Gin, image format not stated)."
			}
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: caption, SVG: svg})
		}
	}
	t := analysis.Table{Caption: "Median upload latency (ms), one client, beside the paper's figures.", Header: []string{"size KB", "format"}}
	t.Header = append(t.Header, variants...)
	t.Header = append(t.Header, "paper Spring", "paper Gin")
	for _, s := range seq {
		if s.op != "post" {
			continue
		}
		row := []string{analysis.Num(s.kb, 0), s.format}
		for _, v := range variants {
			m, _ := p50(v, name(s))
			row = append(row, analysis.Num(m, 1))
		}
		row = append(row, paperAt(figures["latency-spring"], s.kb), paperAt(figures["latency-gin"], s.kb))
		t.Rows = append(t.Rows, row)
	}
	sec.Tables = append(sec.Tables, t)
	return sec
}

// paperCurve draws a published figure (ms over image size in KB) as
// published: a band "800–850 ms for 40–90 KB" from its low corner to its
// high one, a single size as a point.
func paperCurve(f claims.Figure, who string) plot.XYSeries {
	xy := plot.XYSeries{Name: "paper " + who, Dashed: true, Points: true}
	bands := slices.Clone(f.Bands)
	slices.SortFunc(bands, func(a, b claims.Band) int { return cmp.Compare(a.X[0], b.X[0]) })
	for _, b := range bands {
		xy.X, xy.Y = append(xy.X, b.X[0]), append(xy.Y, b.Y[0])
		if b.X[1] != b.X[0] || b.Y[1] != b.Y[0] {
			xy.X, xy.Y = append(xy.X, b.X[1]), append(xy.Y, b.Y[1])
		}
	}
	return xy
}

// paperAt is the published figure at a size, as published ("800–850").
func paperAt(f claims.Figure, kb float64) string {
	for _, b := range f.Bands {
		if kb >= b.X[0] && kb <= b.X[1] {
			if b.Y[0] == b.Y[1] {
				return analysis.Num(b.Y[0], 0)
			}
			return analysis.Num(b.Y[0], 0) + "–" + analysis.Num(b.Y[1], 0)
		}
	}
	return "–"
}

// tfSplitSection splits each upload into T_r + T_f (outside the handler)
// and the handler's stages, from Server-Timing means.
func tfSplitSection(ds *analysis.Dataset, seq []tfStep, variants []string, name func(tfStep) string) analysis.Section {
	sec := analysis.Section{Title: "Where an upload's time goes: T_r + T_p + T_f"}
	sec.Text = append(sec.Text, "T_p is the handler's time as the service reports it (Server-Timing handler: decode, process, persist, and the rest: multipart parsing, JSON, framework); T_r + T_f is the round trip minus the handler. Means, which add up, medians over repetitions.")
	t := analysis.Table{Header: []string{"size KB", "format", "variant", "round trip", "T_r + T_f", "decode", "process", "persist", "rest of T_p"}}
	var cats []string
	layers := []plot.Layer{{Name: "T_r + T_f"}, {Name: "decode"}, {Name: "process"}, {Name: "persist"}, {Name: "rest of T_p"}}
	for _, s := range seq {
		if s.op != "post" {
			continue
		}
		for _, v := range variants {
			mean := func(metric string) float64 {
				m, _ := ds.Median(v, name(s), func(u *analysis.Unit) float64 { return u.Summary.ServerTiming[metric].Mean })
				return m
			}
			rt, ok := ds.Median(v, name(s), func(u *analysis.Unit) float64 { return u.Summary.Uncorrected.Mean })
			if !ok {
				continue
			}
			h, dec, pro, per := mean("handler"), mean("decode"), mean("process"), mean("persist")
			vals := []float64{rt - h, dec, pro, per, h - dec - pro - per}
			t.Rows = append(t.Rows, []string{analysis.Num(s.kb, 0), s.format, v, analysis.Num(rt, 2), analysis.Num(vals[0], 2), analysis.Num(dec, 2), analysis.Num(pro, 2), analysis.Num(per, 2), analysis.Num(vals[4], 2)})
			if s.format == "png" {
				cats = append(cats, v+" "+analysis.Num(s.kb, 0)+"K")
				for i := range layers {
					layers[i].Values = append(layers[i].Values, max(vals[i], 0))
				}
			}
		}
	}
	if len(t.Rows) == 0 {
		return sec
	}
	sec.Tables = append(sec.Tables, t)
	if svg, err := plot.StackedBars("PNG upload: mean time per stage", "ms per upload", cats, layers, plot.Options{}); err == nil {
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: "One client. T_r + T_f covers the transfer both ways and the framework outside the handler.", SVG: svg})
	}
	return sec
}

func tfConcurrencySection(ds *analysis.Dataset, conc []tfStep, variants []string) analysis.Section {
	sec := analysis.Section{Title: "Throughput and tail latency against concurrency"}
	t := analysis.Table{Caption: "Closed model: each client sends the next request when the last is answered. Medians over repetitions.", Header: []string{"op", "size", "clients", "variant", "req/s", "p50 ms", "p99 ms", "errors %"}}
	for _, op := range []string{"post", "fetch"} {
		sizes := []string{}
		for _, s := range conc {
			if s.op == op && !slices.Contains(sizes, s.size) {
				sizes = append(sizes, s.size)
			}
		}
		for _, size := range sizes {
			var tput, p99 []plot.XYSeries
			for _, v := range variants {
				a := plot.XYSeries{Name: v, Points: true}
				b := plot.XYSeries{Name: v, Points: true}
				for _, s := range conc {
					if s.op != op || s.size != size {
						continue
					}
					step := s.name
					r, ok := ds.Median(v, step, analysis.Of(summarymetric.Throughput))
					if !ok {
						continue
					}
					q99, _ := ds.Median(v, step, analysis.Of(summarymetric.P99))
					q50, _ := ds.Median(v, step, analysis.Of(summarymetric.P50))
					errs, _ := ds.Median(v, step, func(u *analysis.Unit) float64 { return 100 * (1 - u.Summary.SuccessRate) })
					a.X, a.Y = append(a.X, float64(s.users)), append(a.Y, r)
					b.X, b.Y = append(b.X, float64(s.users)), append(b.Y, q99)
					t.Rows = append(t.Rows, []string{op, size, strconv.Itoa(s.users), v, analysis.Num(r, 1), analysis.Num(q50, 1), analysis.Num(q99, 1), analysis.Num(errs, 2)})
				}
				if len(a.X) > 0 {
					tput, p99 = append(tput, a), append(p99, b)
				}
			}
			zero := 0.0
			if svg, err := plot.Lines(fmt.Sprintf("%s %s: throughput", strings.ToUpper(op), size), "clients", "requests per second", tput, plot.Options{LogX: true, YMin: &zero}); err == nil {
				sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Completed requests per second against the number of clients.", SVG: svg})
			}
			if svg, err := plot.Lines(fmt.Sprintf("%s %s: p99 latency", strings.ToUpper(op), size), "clients", "p99 latency (ms)", p99, plot.Options{LogX: true, LogY: true}); err == nil {
				sec.Figures = append(sec.Figures, analysis.Figure{Caption: "99th percentile latency against the number of clients.", SVG: svg})
			}
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec
}

// tfStartupSection sets each variant's start and first requests apart from
// its steady state.
func tfStartupSection(ds *analysis.Dataset, seq []tfStep, variants []string) (analysis.Section, error) {
	sec := analysis.Section{Title: "Start-up and warm-up"}
	sec.Text = append(sec.Text, "The first requests a fresh service answers are the setup uploads (one image of each size and format, smallest first), sent right after it reports ready; the JVM interprets before it compiles, so these are reported apart from the measured steps, which each start after a warm-up of their own.")
	// Steady state beside start-up: the smallest PNG upload.
	var smallest *tfStep
	for i, s := range seq {
		if s.op == "post" && s.format == "png" && (smallest == nil || s.kb < smallest.kb) {
			smallest = &seq[i]
		}
	}
	steadyHeader := "steady p50 ms (not measured)"
	if smallest != nil {
		steadyHeader = fmt.Sprintf("steady POST PNG %s KB p50 ms", analysis.Num(smallest.kb, 0))
	}
	t := analysis.Table{Header: []string{"variant", "rep", "start → ready s", "start → first success s", "first request ms", "mean of first 5 ms", steadyHeader, "peak memory MiB (service)", "CPU s (service, all steps)"}}
	reps := ds.Study.Repetitions
	var never []string
	for _, v := range variants {
		steady := analysis.NaN
		if smallest != nil {
			steady, _ = ds.Median(v, smallest.name, analysis.Of(summarymetric.P50))
		}
		for rep := 1; rep <= reps; rep++ {
			st, err := ds.Startup(rep, v)
			if err != nil {
				return sec, err
			}
			if st == nil {
				never = append(never, fmt.Sprintf("%s repetition %d", v, rep))
				continue
			}
			ready := 0.0
			if len(st.Instances) > 0 {
				ready = st.Instances[0].ReadyS
			}
			first, firstFive := analysis.NaN, analysis.NaN
			if n := len(st.FirstRequests); n > 0 {
				first = st.FirstRequests[0].LatencyMs
				var xs []float64
				for _, r := range st.FirstRequests[:min(5, n)] {
					xs = append(xs, r.LatencyMs)
				}
				firstFive = stats.Mean(xs)
			}
			peak, cpu := serviceUse(ds, v, rep, ds.Study.Load.Service)
			t.Rows = append(t.Rows, []string{v, strconv.Itoa(rep), analysis.Num(ready, 2), analysis.Num(st.FirstSuccessS, 2), analysis.Num(first, 1), analysis.Num(firstFive, 1), analysis.Num(steady, 1), analysis.Num(peak/(1<<20), 0), analysis.Num(cpu, 1)})
		}
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, analysis.NotMeasured(never))
	return sec, nil
}

// serviceUse is a service's highest peak memory over a repetition's steps
// and its CPU seconds summed over them.
func serviceUse(ds *analysis.Dataset, variant string, rep int, service string) (peak, cpu float64) {
	for _, st := range ds.Study.Load.Steps {
		for _, u := range ds.Units(variant, st.Name) {
			if u.Rep != rep {
				continue
			}
			for _, s := range u.Resources.Services {
				if s.Service == service {
					peak = max(peak, float64(s.PeakMemBytes))
					cpu += s.CPUUserS + s.CPUSysS
				}
			}
		}
	}
	return peak, cpu
}
