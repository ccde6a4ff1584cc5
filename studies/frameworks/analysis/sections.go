package frameworks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

// finiteRuns lists the finite per-repetition values in repetition order.
func finiteRuns(m map[int]float64) []float64 {
	var out []float64
	for _, x := range byRep(m) {
		if finite(x) {
			out = append(out, x)
		}
	}
	return out
}

// cell is WithCI over the repetitions with a finite value, kept in
// rng; "–" when nothing was measured.
func cell(m map[int]float64, digits int, rng stats.Range) string {
	xs := finiteRuns(m)
	if len(xs) == 0 {
		return "–"
	}
	return analysis.WithCI(xs, digits, rng)
}

// scaled multiplies every value, e.g. a share into a percentage.
func scaled(m map[int]float64, k float64) map[int]float64 {
	out := map[int]float64{}
	for rep, x := range m {
		out[rep] = k * x
	}
	return out
}

// medianCI is analysis.MedianCI over the repetitions with a finite value.
func medianCI(m map[int]float64, rng stats.Range) (med, lo, hi float64) {
	return analysis.MedianCI(finiteRuns(m), rng)
}

func approx(x float64) string  { return "≈ " + strconv.FormatFloat(x, 'f', -1, 64) }
func plain(x float64) string   { return strconv.FormatFloat(x, 'f', -1, 64) }
func atLeast(x float64) string { return "> " + strconv.FormatFloat(x, 'f', -1, 64) }
func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', -1, 64) + "%" }
func fwLabel(fw string) string { return fw + "-" + authorsLoad[fw] }
func yesNo(b bool) string      { return map[bool]string{true: "yes", false: "no"}[b] }
func repsOf(units int) string  { return strconv.Itoa(units) }

// variantObj is the study variant of a row, for the services it runs.
func (r *fwRun) variantObj(v variantRow) study.Variant {
	out, _ := r.ds.Variant(map[string]string{"framework": v.fw, "load": v.load})
	return out
}

func (r *fwRun) durationSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Request duration: median and p95, beside the thesis",
		Text: []string{
			"Latency from the send of each request to its answer (closed model: each user sends, waits, pauses). Per step and variant, the median over repetitions of each repetition's p50 and p95 (a percentile is never pooled over repetitions), with its 95% interval (with fewer than 6, the mean with its own). " +
				"The thesis reported the same two figures per framework and test; its verdicts compare the frameworks with their authors' loading (marked), by ratios of medians measured side by side in the same repetition (second table).",
			r.notMeasured(),
		},
	}
	t := analysis.Table{
		Caption: "Per step and variant: median over repetitions with its 95% interval (with fewer than 6, the mean with its own).",
		Header:  []string{"app", "level", "variant", "dataset loaded", "reps", "p50 ms", "p95 ms", "p95 / p50", "thesis"},
	}
	for _, c := range r.cases {
		for _, v := range r.variants() {
			units := r.ds.Units(v.key, c.step.Name)
			if len(units) == 0 {
				continue
			}
			paper := "–"
			switch {
			case v.fw == spring && v.authors() && c.level == low:
				paper = paperText(r.ds.PaperPoint("spring-tail", c.app), func(x float64) string { return "p95 " + approx(x) + " × p50" })
			case v.fw == micro && v.authors() && c.app == universities && c.level == high:
				paper = paperText(r.ds.PaperValue("micro-universities-high-p50"), func(x float64) string { return "p50 " + approx(x) + " ms" })
			}
			t.Rows = append(t.Rows, []string{c.app, c.level, v.key, v.loadText(), repsOf(len(units)),
				cell(r.ds.PerRun(v.key, c.step.Name, p50), 1, stats.NonNegative), cell(r.ds.PerRun(v.key, c.step.Name, p95), 1, stats.NonNegative), cell(r.ds.PerRun(v.key, c.step.Name, tail), 1, stats.NonNegative), paper})
		}
	}
	ratios := analysis.Table{
		Caption: "Ratios of medians per repetition, each framework with its authors' loading (" + authorsVariants() + "): median over repetitions with its 95% interval (with fewer than 6, the mean with its own), the thesis' figure beside. " +
			"Every pair is shown, never one over the faster of the others (biased): a framework is fastest in a step where its ratio over each other is below 1.",
		Header: []string{"app", "level", "micro / spring", "thesis", "micro / nest", "thesis", "nest / spring"},
	}
	for _, c := range r.cases {
		mn := paperText(r.ds.PaperPoint("p50-micro-vs-nest", c.app+"-"+c.level), plain)
		if x := r.ds.PaperPoint("p50-micro-vs-nest-at-least", c.app+"-"+c.level); finite(x) {
			mn = atLeast(x)
		}
		ratios.Rows = append(ratios.Rows, []string{c.app, c.level,
			cell(across(ratio, r.authors(micro, c, p50), r.authors(spring, c, p50)), 2, stats.NonNegative), paperText(r.ds.PaperPoint("p50-micro-vs-spring", c.app+"-"+c.level), plain),
			cell(across(ratio, r.authors(micro, c, p50), r.authors(nest, c, p50)), 2, stats.NonNegative), mn,
			cell(across(ratio, r.authors(nest, c, p50), r.authors(spring, c, p50)), 2, stats.NonNegative)})
	}
	sec.Tables = append(sec.Tables, t, ratios)
	for _, app := range apps {
		var cats []string
		var cs []*fcase
		for _, c := range r.cases {
			if c.app == app {
				cats, cs = append(cats, c.level+" load"), append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		var series []plot.Series
		for _, fw := range frameworkOrder {
			s := plot.Series{Name: fwLabel(fw)}
			for _, c := range cs {
				med, lo, hi := medianCI(r.authors(fw, c, p50), stats.NonNegative)
				s.Values, s.Low, s.High = append(s.Values, med), append(s.Low, lo), append(s.High, hi)
			}
			series = append(series, s)
		}
		svg, err := plot.GroupedBars(app+": median request duration", "p50 latency, ms", cats, series, plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: app + ": median over repetitions of each repetition's p50, with its 95% interval (with fewer than 6, the mean with its own); each framework with its authors' loading.", SVG: svg})
	}
	return sec, nil
}

func (r *fwRun) successSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Success, both ways: HTTP 200 at all, and HTTP 200 within the pause",
		Text: []string{
			"The thesis counted a request as successful on HTTP 200, and its k6 failed every request not answered within the pause that followed it (1 s at low load, 0.5 s at high): its success rates are answers 200 within the pause. " +
				"msbench waits 30 s and keeps every answer, so both rules are computed from the records: answered 200 at all (whatever the body), and answered 200 with a latency no longer than the step's pause parameter. " +
				"The difference is the answers that came, late. Shares per repetition, median over repetitions with its 95% interval (with fewer than 6, the mean with its own); counts are medians.",
			"The thesis' own figures for Micro's Universities at high load do not fit the pause rule together: a median of about 1 s leaves at most half of the requests answered within 0.5 s, yet it gives 98.8% success. " +
				"One of the two was measured otherwise (k6's time-out may not have been the pause there, or the median not of the same test); the claims judge each as published, and this table shows both rules beside it.",
			r.notMeasured(),
		},
	}
	t := analysis.Table{
		Caption: "Per step and variant, from every record.",
		Header:  []string{"app", "level", "pause ms", "variant", "dataset loaded", "reps", "requests", "200 %", "200 within the pause %", "200 after the pause", "not 200", "thesis (200 within the pause)"},
	}
	for _, c := range r.cases {
		for _, v := range r.variants() {
			units := r.ds.Units(v.key, c.step.Name)
			if len(units) == 0 {
				continue
			}
			pr := func(f func(s *recStats) float64) map[int]float64 {
				return r.ds.PerRun(v.key, c.step.Name, r.fromRecords(f))
			}
			paper := "–"
			if v.authors() {
				paper = paperText(r.ds.PaperPoint("success-within-pause", v.fw+"-"+c.app+"-"+c.level), percent)
			}
			requests, _ := r.ds.Median(v.key, c.step.Name, func(u *analysis.Unit) float64 { return float64(u.Summary.Requests) })
			late, failed := stats.Median(finiteRuns(pr(lateCount))), stats.Median(finiteRuns(pr(failedCount)))
			t.Rows = append(t.Rows, []string{c.app, c.level, analysis.Num(c.pauseMs, 0), v.key, v.loadText(), repsOf(len(units)), analysis.Num(requests, 0),
				cell(scaled(pr(share200), 100), 2, stats.Percent), cell(scaled(pr(sharePause), 100), 2, stats.Percent), analysis.Num(late, 0), analysis.Num(failed, 0), paper})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

// services are the study's services in its order: every program of every
// framework's deployment.
func (r *fwRun) services() []*study.Service { return r.ds.Study.Services }

// serviceLabel names a service in a table header, saying what the
// registries are (services/README.md).
func serviceLabel(name string) string {
	if l, ok := map[string]string{"eureka": "eureka (Spring's registry)", "nats": "nats (Micro's registry)", "registry": "registry (Eureka or NATS)"}[name]; ok {
		return l
	}
	return name
}

func (r *fwRun) resourcesSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "CPU time and memory of every process",
		Text: []string{
			"CPU: user + system time of every process of the deployment during the step (each framework's registry included: Eureka for Spring, NATS for Micro; Nest has none), as the thesis summed its containers' CPU over a test; CPU per request divides it by the requests sent. " +
				"Memory: each process's peak during the step, summed over the deployment (the thesis' containers' peaks; a sum of peaks is at least the peak of the sum). Medians over repetitions with their 95% intervals (with fewer than 6, means with their own). " +
				"At low load (100 requests in about 10 s) the CPU the processes spend idle (the JVMs' compilers and collectors, Eureka's heartbeats and registry fetches) weighs on the per-request figure; at high load the requests dominate it.",
			r.notMeasured(),
		},
	}
	t := analysis.Table{
		Caption: "Per step and variant, every process summed.",
		Header:  []string{"app", "level", "variant", "dataset loaded", "reps", "CPU s", "CPU ms / request", "memory MiB (sum of peaks)"},
	}
	svcs := r.services()
	cpuT := analysis.Table{Caption: "CPU seconds per process during the step (median over repetitions); \"not run\": the framework has no such program.", Header: []string{"app", "level", "variant"}}
	memT := analysis.Table{Caption: "Peak memory per process during the step, MiB (median over repetitions).", Header: []string{"app", "level", "variant"}}
	for _, s := range svcs {
		cpuT.Header = append(cpuT.Header, serviceLabel(s.Name))
		memT.Header = append(memT.Header, serviceLabel(s.Name))
	}
	var unrecorded []string
	for _, c := range r.cases {
		for _, v := range r.variants() {
			units := r.ds.Units(v.key, c.step.Name)
			if len(units) == 0 {
				continue
			}
			t.Rows = append(t.Rows, []string{c.app, c.level, v.key, v.loadText(), repsOf(len(units)),
				cell(r.ds.PerRun(v.key, c.step.Name, cpuS), 2, stats.NonNegative), cell(r.ds.PerRun(v.key, c.step.Name, cpuPerRequestMs), 3, stats.NonNegative), cell(r.ds.PerRun(v.key, c.step.Name, memMiB), 0, stats.NonNegative)})
			cpuRow, memRow := []string{c.app, c.level, v.key}, []string{c.app, c.level, v.key}
			vo := r.variantObj(v)
			for _, s := range svcs {
				if !s.RunsIn(vo) {
					cpuRow, memRow = append(cpuRow, "not run"), append(memRow, "not run")
					continue
				}
				cpu := finiteRuns(r.ds.PerRun(v.key, c.step.Name, serviceCPU(s.Name)))
				mem := finiteRuns(r.ds.PerRun(v.key, c.step.Name, serviceMem(s.Name)))
				if len(cpu) < len(units) {
					unrecorded = append(unrecorded, fmt.Sprintf("%s in %s %s (%d of %d repetitions)", s.Name, v.key, c.step.Name, len(units)-len(cpu), len(units)))
				}
				cpuRow = append(cpuRow, analysis.Num(stats.Median(cpu), 2))
				memRow = append(memRow, analysis.Num(stats.Median(mem), 0))
			}
			cpuT.Rows, memT.Rows = append(cpuT.Rows, cpuRow), append(memT.Rows, memRow)
		}
	}
	if len(unrecorded) > 0 {
		sec.Text = append(sec.Text, "No resources recorded for a process that runs in the variant (its figures and the sums above lack it): "+strings.Join(unrecorded, ", ")+".")
	}
	ratios := analysis.Table{
		Caption: "Ratios per repetition, each framework with its authors' loading: median over repetitions with its 95% interval (with fewer than 6, the mean with its own), the thesis' figure beside. " +
			"Each pair the claims compare is its own column, never one over the larger or smaller of the others (biased).",
		Header: []string{"app", "level", "nest / spring memory", "nest / micro memory", "thesis", "micro / spring CPU", "thesis", "micro / nest CPU", "nest / spring CPU per request", "nest / micro CPU per request"},
	}
	for _, c := range r.cases {
		cpuPaper := "–"
		if c.level == high {
			cpuPaper = paperText(r.ds.PaperValue("micro-cpu-vs-spring-high"), atLeast)
		}
		ratios.Rows = append(ratios.Rows, []string{c.app, c.level,
			cell(across(ratio, r.authors(nest, c, memMiB), r.authors(spring, c, memMiB)), 3, stats.NonNegative),
			cell(across(ratio, r.authors(nest, c, memMiB), r.authors(micro, c, memMiB)), 3, stats.NonNegative),
			paperText(r.ds.PaperValue("nest-memory-share"), func(x float64) string { return "nest " + approx(x) + " × the others" }),
			cell(across(ratio, r.authors(micro, c, cpuS), r.authors(spring, c, cpuS)), 2, stats.NonNegative), cpuPaper,
			cell(across(ratio, r.authors(micro, c, cpuS), r.authors(nest, c, cpuS)), 2, stats.NonNegative),
			cell(across(ratio, r.authors(nest, c, cpuPerRequestMs), r.authors(spring, c, cpuPerRequestMs)), 3, stats.NonNegative),
			cell(across(ratio, r.authors(nest, c, cpuPerRequestMs), r.authors(micro, c, cpuPerRequestMs)), 3, stats.NonNegative)})
	}
	sec.Tables = append(sec.Tables, t, ratios, cpuT, memT)
	var cats []string
	for _, c := range r.cases {
		cats = append(cats, c.label())
	}
	for _, chart := range []struct {
		title, y string
		f        func(u *analysis.Unit) float64
	}{
		{"Memory: sum of every process's peak", "MiB", memMiB},
		{"CPU time of every process during the step", "CPU seconds", cpuS},
		{"CPU per request", "CPU ms per request", cpuPerRequestMs},
	} {
		var series []plot.Series
		for _, fw := range frameworkOrder {
			s := plot.Series{Name: fwLabel(fw)}
			for _, c := range r.cases {
				med, lo, hi := medianCI(r.authors(fw, c, chart.f), stats.NonNegative)
				s.Values, s.Low, s.High = append(s.Values, med), append(s.Low, lo), append(s.High, hi)
			}
			series = append(series, s)
		}
		if len(cats) == 0 {
			break
		}
		svg, err := plot.GroupedBars(chart.title, chart.y, cats, series, plot.Options{})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: chart.title + " per step, each framework with its authors' loading: median over repetitions with its 95% interval (with fewer than 6, the mean with its own).", SVG: svg})
	}
	return sec, nil
}

// targetNames are the names of the targets of an application's steps: how
// the first requests of startup.json are told apart.
func (r *fwRun) targetNames(app string) []string {
	var out []string
	for _, c := range r.cases {
		if c.app != app {
			continue
		}
		for _, t := range c.step.Targets {
			out = append(out, t.Name)
		}
	}
	return out
}

func (r *fwRun) warmupSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Warm-up: the first requests after the start, apart from steady state (ours)",
		Text: []string{
			"The thesis saw Spring's first requests slow (the JVM interprets before it compiles) and reported them inside its figures. Here they are set apart. " +
				"startup.json keeps the first requests a fresh deployment answered: one per step's target, sent when the gateway reported ready, before any load. " +
				fmt.Sprintf("Then, in every step, the median of its first %d requests (by send time: at low load, each user's first) is set beside the median of the rest, and the p95/p50 of the step beside the same without those %d. ", firstN, firstN) +
				"Steps run in the study's order on one deployment, so only each application's first step meets freshly started services; its later step is the control.",
		},
	}
	helloNames, uniNames := r.targetNames(hello), r.targetNames(universities)
	firstOf := func(reqs []string, names []string, lat []float64) float64 {
		for i, n := range reqs {
			if slices.Contains(names, n) {
				return lat[i]
			}
		}
		return analysis.NaN
	}
	startT := analysis.Table{
		Caption: "Per variant and repetition, from startup.json; steady state: the median of the first hello step without its first requests.",
		Header:  []string{"variant", "rep", "slowest program ready s", "first answer s", "first hello request ms", "first universities request ms", "steady hello median ms", "first hello / steady"},
	}
	var noStartup []string
	for _, v := range r.variants() {
		for rep := 1; rep <= r.ds.Study.Repetitions; rep++ {
			st, err := r.ds.Startup(rep, v.key)
			if err != nil {
				return sec, err
			}
			if st == nil {
				noStartup = append(noStartup, fmt.Sprintf("%s repetition %d (no startup.json)", v.key, rep))
				continue
			}
			slowest, ready := "", analysis.NaN
			for _, in := range st.Instances {
				if !(ready >= in.ReadyS) {
					slowest, ready = in.Name, in.ReadyS
				}
			}
			var names []string
			var lat []float64
			for _, fr := range st.FirstRequests {
				names, lat = append(names, fr.Name), append(lat, fr.LatencyMs)
			}
			firstHello, firstUni := firstOf(names, helloNames, lat), firstOf(names, uniNames, lat)
			steady := analysis.NaN
			if c := r.first[hello]; c != nil {
				if x, ok := r.ds.PerRun(v.key, c.step.Name, r.fromRecords(restMedianOf))[rep]; ok {
					steady = x
				}
			}
			readyText := analysis.Num(ready, 2)
			if slowest != "" {
				readyText += " (" + slowest + ")"
			}
			startT.Rows = append(startT.Rows, []string{v.key, strconv.Itoa(rep), readyText, analysis.Num(st.FirstSuccessS, 2),
				analysis.Num(firstHello, 1), analysis.Num(firstUni, 1), analysis.Num(steady, 2), analysis.Num(firstHello/steady, 1)})
		}
	}
	stepsT := analysis.Table{
		Caption: fmt.Sprintf("Per step and variant: the first %d requests against the rest (medians over repetitions with their 95%% intervals; with fewer than 6, means with their own), from the records.", firstN),
		Header:  []string{"app", "level", "first step of its app after the start", "variant", "reps", fmt.Sprintf("median of the first %d ms", firstN), "median of the rest ms", "first / rest", "p95 / p50, every request", fmt.Sprintf("p95 / p50 without the first %d", firstN)},
	}
	for _, c := range r.cases {
		for _, v := range r.variants() {
			units := r.ds.Units(v.key, c.step.Name)
			if len(units) == 0 {
				continue
			}
			pr := func(f func(s *recStats) float64) map[int]float64 {
				return r.ds.PerRun(v.key, c.step.Name, r.fromRecords(f))
			}
			stepsT.Rows = append(stepsT.Rows, []string{c.app, c.level, yesNo(r.first[c.app] == c), v.key, repsOf(len(units)),
				cell(pr(firstMedianOf), 1, stats.NonNegative), cell(pr(restMedianOf), 1, stats.NonNegative), cell(pr(warmup), 1, stats.NonNegative), cell(pr(recordsTail), 1, stats.NonNegative), cell(pr(steadyTail), 1, stats.NonNegative)})
		}
	}
	sec.Tables = append(sec.Tables, startT, stepsT)
	if len(noStartup) > 0 {
		sec.Text = append(sec.Text, analysis.NotMeasured(noStartup))
	}
	sec.Text = append(sec.Text, r.notMeasured())
	for _, app := range apps {
		c := r.first[app]
		if c == nil {
			continue
		}
		var series []plot.XYSeries
		for _, fw := range frameworkOrder {
			s := plot.XYSeries{Name: fwLabel(fw), Points: true}
			for i := range headN {
				var xs []float64
				for _, u := range r.ds.Units(r.key(fw, authorsLoad[fw]), c.step.Name) {
					if st := r.rec(u); st != nil && i < len(st.head) && st.head[i] > 0 {
						xs = append(xs, st.head[i])
					}
				}
				if len(xs) > 0 {
					s.X, s.Y = append(s.X, float64(i+1)), append(s.Y, stats.Median(xs))
				}
			}
			series = append(series, s)
		}
		svg, err := plot.Lines(fmt.Sprintf("%s: the first %d requests of %s", app, headN, c.step.Name), "request number, by send time", "latency, ms", series, plot.Options{LogY: true})
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, analysis.Figure{Caption: fmt.Sprintf("Latency of the n-th request of %s, the first %s step after the start (median over repetitions), each framework with its authors' loading.", c.step.Name, app), SVG: svg})
	}
	return sec, nil
}

func (r *fwRun) loadingSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "The dataset parsed for every request or read once at start (ours)",
		Text: []string{
			"The thesis' Spring and Micro re-parsed the 2 MB dataset for every Universities request; its Nest read it once at start. The load axis runs a framework both ways: the same framework's median and CPU per request under each, and their ratio per repetition. " +
				"Hello rows are the control: the universities service idles there, so their ratios should be 1 within the noise.",
			r.notMeasured(),
		},
	}
	both := slices.DeleteFunc(slices.Clone(frameworkOrder), func(fw string) bool { return r.key(fw, perRequest) == "" || r.key(fw, atStart) == "" })
	if len(both) == 0 {
		// A profile that keeps each framework one way (quick keeps the
		// authors') has no pair to set side by side: a table of one-sided
		// rows would only repeat the duration section.
		sec.Text = append(sec.Text, "This run deployed no framework both ways, so this section has nothing to compare; the default profile deploys all six variants.")
		return sec, nil
	}
	t := analysis.Table{
		Caption: "Per step and framework: " + perRequest + " and " + atStart + " side by side in each repetition (median over repetitions with its 95% interval; with fewer than 6, the mean with its own).",
		Header:  []string{"app", "level", "framework", "p50 ms " + perRequest, "p50 ms " + atStart, "p50 ratio", "CPU ms / request " + perRequest, "CPU ms / request " + atStart, "CPU per request ratio"},
	}
	for _, c := range r.cases {
		for _, fw := range both {
			a, b := r.runs(fw, perRequest, c, p50), r.runs(fw, atStart, c, p50)
			ca, cb := r.runs(fw, perRequest, c, cpuPerRequestMs), r.runs(fw, atStart, c, cpuPerRequestMs)
			if len(a)+len(b) == 0 {
				continue
			}
			t.Rows = append(t.Rows, []string{c.app, c.level, fw, cell(a, 1, stats.NonNegative), cell(b, 1, stats.NonNegative), cell(across(ratio, a, b), 2, stats.NonNegative), cell(ca, 3, stats.NonNegative), cell(cb, 3, stats.NonNegative), cell(across(ratio, ca, cb), 2, stats.NonNegative)})
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}
