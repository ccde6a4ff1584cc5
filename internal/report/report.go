// Package report turns a run directory into one self-contained HTML file
// (inline SVG plots, no network) and a Markdown summary: tables and plots
// per step, resource use, and, for studies that have one, an analysis that
// sets the published claims beside what was measured.
package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/plot"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

// Options change what a report judges.
type Options struct {
	// KeepFailedAudits judges claims on steps whose noise audit failed
	// too; by default they are shown, flagged, and left out of verdicts.
	KeepFailedAudits bool
}

// Write renders the report of the run in dir and returns the HTML path.
func Write(dir string, opts Options) (string, error) {
	ds, err := analysis.Load(dir)
	if err != nil {
		return "", err
	}
	sections, _ := studySections(ds, opts)
	steps, err := stepSections(ds)
	if err != nil {
		return "", err
	}
	sections = append(sections, steps...)
	sections = append(sections, provenanceSection(ds))
	html := results.ReportHTML(dir)
	if err := results.WriteFile(html, renderHTML(ds, sections)); err != nil {
		return "", err
	}
	if err := results.WriteFile(results.ReportMarkdown(dir), renderMarkdown(ds, sections)); err != nil {
		return "", err
	}
	return html, nil
}

// studySections are the report's first part: what the run lacks, the
// noise model, the claims judged, every variant against the baseline, and
// the study's own analysis; the judged claims are returned apart for the
// index of all studies.
func studySections(ds *analysis.Dataset, opts Options) ([]analysis.Section, []claims.Result) {
	var sections []analysis.Section
	if len(ds.Missing) > 0 {
		sections = append(sections, missingSection(ds))
	}
	j := judge(ds, opts)
	sections = append(sections, j.noise.section)
	var judged []claims.Result
	if j.claims != nil {
		sections, judged = append(sections, *j.claims), j.claims.Claims
	}
	sections = append(sections, comparisonSection(ds, opts))
	return append(sections, j.res.Sections...), judged
}

// judged is what the report's claims rest on: the noise model, the
// study's analysis, and the claims judged (nil when the study has none)
// with the metrics they were judged on, which the report and the
// precision a run stops on (Measure) both read.
type judged struct {
	noise   noise
	res     analysis.Result
	claims  *analysis.Section
	metrics map[string]claims.Metric
}

// judge judges a run as a report with opts does: the claims on the steps
// that passed their noise audit unless opts keeps the others.
func judge(ds *analysis.Dataset, opts Options) judged {
	j := judged{noise: noiseModel(ds)}
	if a, ok := analysis.Lookup(ds.Study.Name); ok {
		var err error
		if j.res, err = analyze(a, ds); err != nil {
			// The rest of the report still stands.
			j.res = analysis.Result{Sections: []analysis.Section{{Title: "Analysis", Text: []string{"Could not compute the study's analysis: " + err.Error()}}}}
		}
	}
	if ds.Claims == nil {
		return j
	}
	metrics, left := j.res.Metrics, failedAudits(ds)
	if len(left.units) > 0 && !opts.KeepFailedAudits {
		// The sections show every step, flagged; the verdicts only
		// those that measured the system rather than the machine.
		passed, _ := ds.PassedAudits()
		if a, ok := analysis.Lookup(ds.Study.Name); ok {
			judgedOn, err := analyze(a, passed)
			if err != nil {
				judgedOn = analysis.Result{}
			}
			metrics = judgedOn.Metrics
		}
	}
	sec := claimsSection(ds, metrics, j.noise.model)
	if len(left.units) > 0 && !opts.KeepFailedAudits {
		left.describe(&sec)
		for i, c := range sec.Claims {
			// Measured on every unit, not on those that passed: what
			// it reads failed the audit, and the reader is told why.
			if all := j.res.Metrics[c.Claim.Metric]; all.Measured() && c.Verdict == claims.NotMeasured && len(ds.Missing) == 0 {
				sec.Claims[i].Why = "every step it reads failed the noise audit: " + left.why()
			}
		}
	}
	j.claims, j.metrics = &sec, metrics
	return j
}

// analyze runs a study's analysis on a run, unless the run's study lacks
// what it reads (an old run, from before a step or axis was added).
func analyze(a analysis.Analysis, ds *analysis.Dataset) (analysis.Result, error) {
	needs := a.Needs()
	if err := ds.Study.CheckRun(needs); err != nil {
		return analysis.Result{}, err
	}
	res, err := a.Analyze(ds)
	for id := range res.Metrics {
		if !slices.Contains(needs.Metrics, id) {
			// The claims file was checked against the declared metrics
			// only: an undeclared one would escape that check.
			return res, fmt.Errorf("the analysis measured %q, which its Needs do not declare", id)
		}
	}
	return res, err
}

// claimsSection judges every claim of the study on the analysis'
// metrics, with the noise model for those measured once, and withholds
// verdicts across gaps.
func claimsSection(ds *analysis.Dataset, metrics map[string]claims.Metric, noise claims.Noise) analysis.Section {
	sec := analysis.Section{Title: "Claims and verdicts"}
	sec.Text = append(sec.Text, fmt.Sprintf("Each claim is judged on one metric per run (the run is the unit of replication; ratios of two systems are measured side by side in the same run and summarised by their geometric mean). "+
		"Reproduced: the whole 95%% interval lies where the claim holds; not reproduced: wholly outside; inconclusive: it straddles the edge. The claim's region is the paper's own, never moved by the noise. "+
		"With two runs or more the interval is over the runs; with fewer than %d a verdict is provisional. With one run the interval comes from the A/A noise model (above), marked so, or, for a metric the model knows nothing like, there is none and the verdict is inconclusive. "+
		"A claim about an extreme (X fastest everywhere) is every pairwise comparison it implies, each with a Bonferroni interval so that all hold together at 95%%: it holds when all lie on the claimed side, fails when any lies wholly on the other. Claims marked Ours are questions the paper did not ask.",
		claims.ProvisionalBelow))
	if ds.Prov.Stopped != "" {
		sec.Text = append(sec.Text, stoppedText(ds))
	}
	for _, c := range ds.Claims.Claims {
		sec.Claims = append(sec.Claims, claims.Judge(c, metrics, noise))
	}
	return withholdVerdicts(sec, ds.Missing)
}

// missingSection lists what the run lacks, first, so that nobody reads the
// rest without knowing.
func missingSection(ds *analysis.Dataset) analysis.Section {
	sec := analysis.Section{
		Title: "Missing data",
		Text:  []string{fmt.Sprintf("This run lacks data for %d of its planned parts; the report shows what was measured, and claims that compare variants get no verdict. Continue an interrupted run with msbench run --resume %s.", len(ds.Missing), ds.Dir)},
	}
	t := analysis.Table{Header: []string{"what is missing"}}
	for _, m := range ds.Missing {
		t.Rows = append(t.Rows, []string{m})
	}
	sec.Tables = append(sec.Tables, t)
	return sec
}

// withholdVerdicts turns every verdict into analysis.Undecided when the run lacks
// planned data: a comparison across a gap (one variant measured, its rival
// not) would read like a result. What was measured is still shown.
func withholdVerdicts(sec analysis.Section, missing []string) analysis.Section {
	if len(missing) == 0 {
		return sec
	}
	for j := range sec.Claims {
		c := &sec.Claims[j]
		if c.Verdict == claims.NotMeasured {
			continue
		}
		c.Why = fmt.Sprintf("no verdict: the run lacks data it compares (%d missing parts, listed under Missing data); measured so far it would read %q", len(missing), c.Verdict)
		c.Verdict = claims.NotMeasured
	}
	return sec
}

// manySteps is where per-step sections stop being readable: sweeps get one
// table instead, and their study's analysis draws the curves.
const manySteps = 8

// stepSections gives every load step a table, a latency box plot and
// throughput and resource charts.
func stepSections(ds *analysis.Dataset) ([]analysis.Section, error) {
	if len(ds.Study.Load.Steps) > manySteps {
		return []analysis.Section{allStepsSection(ds)}, nil
	}
	groups, series := ds.Axis()
	var out []analysis.Section
	for _, st := range ds.Study.Load.Steps {
		sec := analysis.Section{Title: "Step " + st.Name}
		sec.Text = append(sec.Text, describeStep(ds, st.Name))
		sec.Text = append(sec.Text, auditWarnings(ds, st.Name)...)
		table := analysis.Table{
			Caption: "Per variant, the median over repetitions with its 95% interval when there are several (from 2 to 5, the mean with its own); latency from the intended send time; max, the largest over the repetitions." + auditCaption,
			Header:  []string{"variant", "reps", "requests", "ok %", "throughput req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "service CPU ms/req", "peak memory MiB", "warm-up p50 ms", "audit"},
		}
		var boxGroups []plot.BoxGroup
		thr := make([]plot.Series, len(series))
		cpu := make([]plot.Series, len(series))
		for i, r := range series {
			thr[i] = plot.Series{Name: seriesName(r)}
			cpu[i] = plot.Series{Name: seriesName(r)}
		}
		for _, g := range groups {
			bg := plot.BoxGroup{Label: g}
			for i, r := range series {
				v, ok := ds.VariantFor(g, r)
				units := ds.Units(v.Key(), st.Name)
				if !ok || len(units) == 0 {
					thr[i].Values = append(thr[i].Values, analysis.NaN)
					cpu[i].Values = append(cpu[i].Values, analysis.NaN)
					continue
				}
				h, err := ds.Merged(v.Key(), st.Name, "latency")
				if err != nil {
					return nil, err
				}
				if h != nil {
					bg.Boxes = append(bg.Boxes, box(seriesName(r), h))
				}
				row, tput, cpuPerReq := variantRow(v.Key(), units)
				table.Rows = append(table.Rows, row)
				thr[i].Values = append(thr[i].Values, tput)
				cpu[i].Values = append(cpu[i].Values, cpuPerReq)
			}
			boxGroups = append(boxGroups, bg)
		}
		sec.Tables = append(sec.Tables, table)
		if svg, err := plot.BoxPlot(st.Name+": latency", "latency (ms)", boxGroups, plot.Options{LogY: true}); err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Latency per variant, all repetitions merged. " + plot.WhiskersMinP99.Caption(), SVG: svg})
		} else {
			sec.Text = append(sec.Text, "Latency plot unavailable: "+err.Error())
		}
		if svg, err := plot.GroupedBars(st.Name+": throughput", "requests per second", groups, thr, plot.Options{}); err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: "Completed requests per second.", SVG: svg})
		}
		if svg, err := plot.GroupedBars(st.Name+": CPU per request", "CPU ms per request (all services)", groups, cpu, plot.Options{}); err == nil {
			sec.Figures = append(sec.Figures, analysis.Figure{Caption: "User + system CPU time of every service during the step, divided by the requests completed.", SVG: svg})
		}
		out = append(out, sec)
	}
	return out, nil
}

// allStepsSection is one table of every step of every variant.
func allStepsSection(ds *analysis.Dataset) analysis.Section {
	t := analysis.Table{
		Caption: "Every step, the median over repetitions with its 95% interval when there are several (from 2 to 5, the mean with its own); latency from the intended send time; max, the largest over the repetitions." + auditCaption,
		Header:  []string{"step", "variant", "reps", "requests", "ok %", "throughput req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "service CPU ms/req", "peak memory MiB", "warm-up p50 ms", "audit"},
	}
	var warnings, designs []string
	steps := map[string][]*study.Step{} // how steps were measured: the steps so measured
	for _, st := range ds.Study.Load.Steps {
		d := st.Sequential
		if st.Interleaved {
			d = ""
		}
		if len(steps[d]) == 0 {
			designs = append(designs, d)
		}
		steps[d] = append(steps[d], st)
		warnings = append(warnings, auditWarnings(ds, st.Name)...)
		for _, v := range ds.Variants {
			if units := ds.Units(v.Key(), st.Name); len(units) > 0 {
				row, _, _ := variantRow(v.Key(), units)
				t.Rows = append(t.Rows, append([]string{st.Name}, row...))
			}
		}
	}
	var text []string
	for _, d := range designs {
		var names []string
		for _, st := range steps[d] {
			names = append(names, st.Name)
		}
		text = append(text, strings.Join(names, ", ")+": "+designOf(ds, steps[d]))
	}
	return analysis.Section{Title: "All steps", Text: append(text, warnings...), Tables: []analysis.Table{t}}
}

func seriesName(r string) string {
	if r == "" {
		return "measured"
	}
	return r
}

func box(name string, h *hdrhistogram.Histogram) plot.Box {
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e6 }
	return plot.Box{Series: name, Min: float64(h.Min()) / 1e6, P25: ms(25), P50: ms(50), P75: ms(75), P99: ms(99), Max: float64(h.Max()) / 1e6, N: int(h.TotalCount())}
}

// variantRow formats one table row and returns the median throughput and
// CPU per request for charts.
func variantRow(key string, units []*analysis.Unit) ([]string, float64, float64) {
	col := func(f func(u *analysis.Unit) float64) []float64 {
		out := make([]float64, len(units))
		for i, u := range units {
			out[i] = f(u)
		}
		return out
	}
	reqs := col(func(u *analysis.Unit) float64 { return float64(u.Summary.Requests) })
	ok := col(func(u *analysis.Unit) float64 { return 100 * u.Summary.SuccessRate })
	tput := col(analysis.Of(summarymetric.Throughput))
	cpu := col(func(u *analysis.Unit) float64 { return 1000 * cpuSeconds(u) / max(float64(u.Summary.Requests), 1) })
	mem := col(func(u *analysis.Unit) float64 { return float64(peakMemory(u)) / (1 << 20) })
	warm := col(func(u *analysis.Unit) float64 {
		if u.Warmup == nil {
			return analysis.NaN
		}
		return u.Warmup.Latency.P50
	})
	row := []string{key, fmt.Sprint(len(units)), analysis.Num(stats.Median(reqs), 0), analysis.Num(stats.Median(ok), 2),
		analysis.WithCI(tput, 1, stats.NonNegative),
		analysis.WithCI(col(analysis.Of(summarymetric.P50)), 3, stats.NonNegative),
		analysis.WithCI(col(analysis.Of(summarymetric.P90)), 3, stats.NonNegative),
		analysis.WithCI(col(analysis.Of(summarymetric.P99)), 3, stats.NonNegative),
		analysis.Num(slices.Max(col(func(u *analysis.Unit) float64 { return u.Summary.Latency.Max })), 3),
		analysis.WithCI(cpu, 3, stats.NonNegative), analysis.Num(stats.Median(mem), 1), analysis.Num(stats.Median(warm), 3), auditCell(units)}
	return row, stats.Median(tput), stats.Median(cpu)
}

func cpuSeconds(u *analysis.Unit) float64 {
	total := 0.0
	for _, s := range u.Resources.Services {
		total += s.CPUUserS + s.CPUSysS
	}
	return total
}

func peakMemory(u *analysis.Unit) int64 {
	var total int64
	for _, s := range u.Resources.Services {
		total += s.PeakMemBytes
	}
	return total
}

func describeStep(ds *analysis.Dataset, name string) string {
	for _, st := range ds.Study.Load.Steps {
		if st.Name != name {
			continue
		}
		parts := []string{st.Load.String()}
		if w := st.Warmup; w.Set() {
			parts = append(parts, fmt.Sprintf("after a warm-up of %s reported apart", warmupText(w.Requests, w.Duration.String())))
		}
		var targets []string
		for _, t := range st.Targets {
			targets = append(targets, t.Method+" "+t.Path)
		}
		return "Load: " + strings.Join(parts, ", ") + "; targets " + strings.Join(targets, ", ") + ". " + design(ds, st)
	}
	return ""
}

// design says how the step was measured: interleaved, in how many rounds
// and what the waiting deployments cost, or in one piece, and why.
func design(ds *analysis.Dataset, st *study.Step) string { return designOf(ds, []*study.Step{st}) }

// designOf says how steps measured alike were measured (see design), the
// rounds and the waiting deployments' CPU the medians over every unit of
// them.
func designOf(ds *analysis.Dataset, steps []*study.Step) string {
	var rounds, idle, perUser []float64
	var slices, leads int
	for _, st := range steps {
		for _, v := range ds.Variants {
			for _, u := range ds.Units(v.Key(), st.Name) {
				if u.Slices != nil {
					rounds = append(rounds, float64(u.Slices.Rounds))
					for _, sl := range u.Slices.Slices {
						slices++
						if sl.Lead {
							leads++
						}
						if !st.Load.Open && sl.Requests > 0 {
							// A slice bound to fewer requests than users starts only as many.
							users := min(int64(cmp.Or(st.Load.Users, loadspec.DefaultUsers)), sl.Requests)
							perUser = append(perUser, float64(sl.Requests)/float64(users))
						}
					}
				}
				if u.Slices != nil || u.Resources.IdleCPUS > 0 {
					idle = append(idle, u.Resources.IdleCPUS/max(u.Summary.DurationS, 1e-9))
				}
			}
		}
	}
	if st := steps[0]; !st.Interleaved {
		why := st.Sequential
		if why == "" {
			why = "the run predates interleaving"
		}
		text := "Measured in one piece per variant, variant after variant: " + why + "."
		if len(idle) > 0 {
			text += " The repetition's other deployments were up meanwhile and used a median " + analysis.Num(100*stats.Median(idle), 1) + "% of a core, counted as the run's in the noise audit."
		}
		return text
	}
	if len(rounds) == 0 {
		return "Measured interleaved, but no unit of it holds its slices (a repetition with one variant left measures in one piece)."
	}
	waiting := "ran on meanwhile"
	if ds.Study.Interleave.Freeze {
		waiting = "were frozen (every process stopped) until their turn"
	}
	n := stats.Median(rounds)
	perStep := "median " + analysis.Num(n, 0) + " rounds"
	if n == 1 {
		perStep = "median 1 round: one slice each, so the variants' turns come closer in time but nothing averages within a step"
	}
	warm := "a load of its own whose last answers came before the slice began"
	switch {
	case leads == slices:
		warm = "sent by the slice's own users, who went on into it without a pause"
	case leads > 0:
		warm = fmt.Sprintf("in %d of %d slices a lead, sent by the slice's own users, who went on into it without a pause; in the rest, a variant's first slice of a step among them, a load of its own whose last answers came before the slice began", leads, slices)
	}
	text := fmt.Sprintf("Measured interleaved: every variant of a repetition deployed at once, each taking one slice of the load per round (%s) in a fresh random order, each slice after %v of warm-up not counted (%s). The waiting deployments %s and used a median %s of a core, counted as the run's in the noise audit.",
		perStep, ds.Study.Interleave.Warmup, warm, waiting, analysis.Num(100*stats.Median(idle), 1)+"%")
	if len(perUser) > 0 && stats.Median(perUser) < study.SteadyCycles {
		text += fmt.Sprintf(" ⚠ Each user sent a median %s requests a slice, fewer than %d: a slice whose users start afresh measures mostly their first wave, sent at once, so this step shows the start of its load more than its steady state. A slice of at least %d of a user's cycles (answer and think time: the study file's interleave: slice, or the step's duration when it is one round) would measure the steady state.",
			analysis.Num(stats.Median(perUser), 1), study.SteadyCycles, study.SteadyCycles)
	}
	return text
}

func warmupText(requests int64, duration string) string {
	if requests > 0 {
		return fmt.Sprintf("%d requests", requests)
	}
	return duration
}

func provenanceSection(ds *analysis.Dataset) analysis.Section {
	p := ds.Prov
	rows := [][]string{
		{"study file", p.StudyFile},
		{"profile", p.Profile},
		{"git commit", p.GitCommit + dirty(p.GitDirty)},
		{"CPU", fmt.Sprintf("%s, %d cores", p.CPUModel, p.Cores)},
		{"memory", fmt.Sprintf("%.1f GiB", float64(p.MemoryBytes)/(1<<30))},
		{"kernel", p.Kernel},
		{"resource accounting", p.ResourceMethod},
		{"started", p.StartedAt.Format("2006-01-02 15:04:05 MST")},
		{"ended", p.EndedAt.Format("2006-01-02 15:04:05 MST")},
	}
	if p.Stopped != "" {
		rows = append(rows, []string{"repetitions", stoppedText(ds)})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Toolchains)) {
		rows = append(rows, []string{"toolchain " + k, p.Toolchains[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Builds)) {
		rows = append(rows, []string{"build " + k, p.Builds[k][:min(16, len(p.Builds[k]))]})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Datasets)) {
		rows = append(rows, []string{"dataset " + k, datasetText(p.Datasets[k])})
	}
	sec := analysis.Section{Title: "Provenance", Tables: []analysis.Table{{Header: []string{"what", "value"}, Rows: rows}}}
	if p.Placement != nil {
		sec.Tables = append(sec.Tables, placementTable(p.Placement))
	}
	if p.Cluster != nil {
		sec.Tables = append(sec.Tables, clusterTable(p.Cluster))
	}
	if t, ok := hostsTable(ds); ok {
		sec.Tables = append(sec.Tables, t)
	}
	if len(ds.State.Failed) > 0 {
		t := analysis.Table{Caption: "Runs that failed (their logs are in logs/).", Header: []string{"run", "why"}}
		for _, k := range slices.Sorted(maps.Keys(ds.State.Failed)) {
			t.Rows = append(t.Rows, []string{k, ds.State.Failed[k]})
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

// clusterTable says what the cluster a run's variants ran on was, and
// what it granted them; the machine rows above are then msbench's own.
func clusterTable(c *results.Cluster) analysis.Table {
	t := analysis.Table{
		Caption: "The Kubernetes cluster every variant ran on (msbench run --kubeconfig): services, dependencies, links and generators as pods. The CPU, memory and kernel above are those of the machine msbench ran on.",
		Header:  []string{"what", "value"},
		Rows: [][]string{
			{"Kubernetes", strings.TrimSpace(c.ServerVersion + " " + c.Platform)},
			{"namespace", c.Namespace},
			{"generator pods", strconv.Itoa(c.Generators)},
		},
	}
	for _, n := range c.Nodes {
		where := strings.Trim(strings.Join([]string{n.InstanceType, n.Zone}, " "), " ")
		t.Rows = append(t.Rows, []string{"node " + n.Name, fmt.Sprintf("%g CPUs (%g allocatable), %.1f GiB, %s, kubelet %s, %s, kernel %s %s",
			n.CPUs, n.AllocatableCPUs, float64(n.MemoryBytes)/(1<<30), n.ContainerRuntime, n.Kubelet, n.OSImage, n.Kernel, where)})
	}
	if c.Hosts != "" {
		t.Rows = append(t.Rows, []string{"hosts", c.Hosts})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Granted)) {
		t.Rows = append(t.Rows, []string{"granted " + k, c.Granted[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Images)) {
		t.Rows = append(t.Rows, []string{"image " + k, c.Images[k]})
	}
	return t
}

func dirty(d bool) string {
	if d {
		return " (with uncommitted changes)"
	}
	return ""
}

// datasetText says which file a dataset was, and whether it is the shared
// one or the study's stand-in.
func datasetText(f results.DatasetFile) string {
	what := "the shared file"
	if f.Source == results.DatasetGenerated {
		what = "generated: the shared file was absent, and the study's stand-in of the same shape was used"
	}
	return fmt.Sprintf("%s, %s (%d bytes, sha256 %s)", what, f.Path, f.Bytes, f.SHA256[:min(16, len(f.SHA256))])
}
