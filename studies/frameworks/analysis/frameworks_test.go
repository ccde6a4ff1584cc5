package frameworks

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/claims/claimstest"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/results/resultstest"
	"github.com/msbench/msbench/internal/study"
)

var t0 = time.Unix(1_700_000_000, 0)

// loadStudy reads the study file itself, so that the tests exercise the
// steps and parameters the study really has.
func loadStudy(t *testing.T, profile string, reps int) *study.Study {
	t.Helper()
	s, err := study.Load("../"+study.FileName, profile)
	if err != nil {
		t.Fatal(err)
	}
	s.Repetitions = reps
	return s
}

// answer is one synthetic request: its latency and status (0: never
// answered).
type answer struct {
	ms     float64
	status uint16
}

// recordsOf lays answers out in send order, 10 ms apart.
func recordsOf(answers []answer) []metrics.Record {
	out := make([]metrics.Record, len(answers))
	for i, a := range answers {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond).UnixNano()
		r := metrics.Record{Seq: uint64(i), Intended: at, Sent: at, Done: at + int64(a.ms*1e6), Status: a.status}
		switch {
		case a.status == 0:
			r.Err = metrics.Timeout
		case a.status != 200:
			r.Err = metrics.Status
		}
		out[i] = r
	}
	return out
}

// writeStep writes answers as a step directory, as the runner would.
func writeStep(t *testing.T, dir results.StepDir, answers []answer, res results.StepResources) metrics.Summary {
	t.Helper()
	sum := resultstest.WriteOpenStep(t, dir, recordsOf(answers), 50)
	if err := dir.WriteResources(res); err != nil {
		t.Fatal(err)
	}
	return sum
}

// unit writes a step directory and returns the unit reading it.
func unit(t *testing.T, v study.Variant, step string, rep int, answers []answer, res results.StepResources) *analysis.Unit {
	t.Helper()
	dir := results.StepDir(t.TempDir())
	sum := writeStep(t, dir, answers, res)
	return &analysis.Unit{Rep: rep, Variant: v, Step: step, Dir: dir, Summary: sum, Resources: res}
}

// The synthetic run: medians (ms) per framework, loading, application and
// level; the first 10 requests of each application's first (low-load)
// step slower by a factor per framework; CPU seconds and peak MiB per
// process.
var (
	synthP50 = map[string]map[string]float64{
		"spring-per-request": {"hello-low": 10, "hello-high": 12, "universities-low": 30, "universities-high": 200},
		"spring-startup":     {"hello-low": 10, "hello-high": 12, "universities-low": 5, "universities-high": 8},
		"nest-startup":       {"hello-low": 3, "hello-high": 3, "universities-low": 4, "universities-high": 6},
		"nest-per-request":   {"hello-low": 3, "hello-high": 3, "universities-low": 12, "universities-high": 40},
		"micro-per-request":  {"hello-low": 37, "hello-high": 150, "universities-low": 60, "universities-high": 1026},
		"micro-startup":      {"hello-low": 37, "hello-high": 150, "universities-low": 3, "universities-high": 12},
	}
	// The first requests against the median: Spring's JVM 8× in hello and
	// 20× in universities, as the thesis' p95/p50.
	synthWarmup = map[string]map[string]float64{
		spring: {hello: 8, universities: 20},
		nest:   {hello: 1.5, universities: 1.5},
		micro:  {hello: 1.2, universities: 1.2},
	}
	synthMiB = map[string]map[string]float64{
		spring: {"registry": 300, "hello": 250, "universities": 300, "gateway": 350},
		nest:   {"hello": 45, "universities": 60, "gateway": 50},
		micro:  {"registry": 15, "hello": 20, "universities": 30, "gateway": 25},
	}
	synthCPU = map[string]map[string]float64{
		spring: {"registry": 0.5, "hello": 1, "universities": 2, "gateway": 3},
		nest:   {"hello": 0.3, "universities": 0.3, "gateway": 0.3},
		micro:  {"registry": 0.2, "hello": 30, "universities": 30, "gateway": 30},
	}
)

// synthAnswers: 100 requests at low load, 200 at high; at Spring's
// Universities high load 26 answers come late (800 ms, past the 500 ms
// pause) and 4 are 502.
func synthAnswers(v study.Variant, st *study.Step, rep int) []answer {
	fw, app, level := v.Get("framework"), st.Params["app"], st.Params["level"]
	k := 1 + 0.02*float64(rep-1)
	med := k * synthP50[v.Key()][app+"-"+level]
	n := 100
	if level == high {
		n = 200
	}
	out := make([]answer, n)
	for i := range out {
		out[i] = answer{med, 200}
		if level == low && i < firstN {
			out[i].ms = med * synthWarmup[fw][app]
		}
	}
	if v.Key() == "spring-per-request" && app == universities && level == high {
		for i := 100; i < 126; i++ {
			out[i].ms = 800 * k
		}
		for i := 150; i < 154; i++ {
			out[i] = answer{5, 502}
		}
	}
	return out
}

// synthResources: every process the variant runs; the high load ten times
// the low's CPU; parsing per request costs Spring's and Micro's
// universities service 4× the CPU of reading at start, Nest's 5×.
func synthResources(s *study.Study, v study.Variant, st *study.Step) results.StepResources {
	fw := v.Get("framework")
	res := results.StepResources{Method: "cgroup-v2"}
	for _, svc := range s.Services {
		if !svc.RunsIn(v) {
			continue
		}
		name := program(svc.Name)
		cpu := synthCPU[fw][name]
		if st.Params["level"] == high {
			cpu *= 10
		}
		if st.Params["app"] == universities {
			switch {
			case fw == nest && v.Get("load") == perRequest:
				cpu *= 5
			case fw != nest && v.Get("load") == atStart:
				cpu /= 4
			}
		}
		res.Services = append(res.Services, results.ServiceUsage{Name: svc.Name, Service: svc.Name, CPUUserS: 0.75 * cpu, CPUSysS: 0.25 * cpu,
			PeakMemBytes: int64(synthMiB[fw][name] * (1 << 20))})
	}
	return res
}

// program is what a service of the study is in the synthetic maps: the
// applications' three programs by name, anything else the framework's
// registry (Eureka, NATS).
func program(service string) string {
	switch service {
	case hello, universities, "gateway":
		return service
	}
	return "registry"
}

// perProcess is the row a per-process table should hold for a framework:
// each service of the study, "not run" where the framework has none.
func perProcess(s *study.Study, fw string, of map[string]map[string]float64, k float64, digits int) string {
	v, _ := analysis.NewDataset(s, nil).Variant(map[string]string{"framework": fw})
	var cells []string
	for _, svc := range s.Services {
		x, ok := of[fw][program(svc.Name)]
		if !ok || !svc.RunsIn(v) {
			cells = append(cells, "not run")
			continue
		}
		cells = append(cells, analysis.Num(k*x, digits))
	}
	return strings.Join(cells, "|")
}

func synthDataset(t *testing.T) *analysis.Dataset {
	t.Helper()
	s := loadStudy(t, "", 3)
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for rep := 1; rep <= s.Repetitions; rep++ {
			for _, st := range s.Load.Steps {
				units = append(units, unit(t, v, st.Name, rep, synthAnswers(v, st, rep), synthResources(s, v, st)))
			}
		}
	}
	return analysis.NewDataset(s, units)
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want)) }

// Every claim of claims.yaml, judged on the metrics of a run whose answer
// is known.
func TestVerdicts(t *testing.T) {
	res, err := frameworksAnalysis{}.Analyze(synthDataset(t))
	if err != nil {
		t.Fatal(err)
	}
	file, err := claims.Load("../" + claims.FileName)
	if err != nil {
		t.Fatal(err)
	}
	steadyTail := "explained by the first requests after the start (JVM warm-up): without the first 10, Spring's p95 is under 2× its median"
	want := map[string]string{
		"nest-fastest":                     claims.Reproduced, // 3/10, 3/12, 4/30, 6/200: at most 0.3
		"spring-second":                    claims.Reproduced, // spring/micro at most 30/60
		"micro-slowest":                    claims.Reproduced, // micro over the slower other at least 60/30
		"spring-slow-first-requests":       claims.Reproduced, // 80 / 10
		"spring-tail-hello-low":            steadyTail,        // 10 of 100 at 8×: p95 = 8× p50; the rest flat
		"spring-tail-universities":         "explained by the first Universities requests after the start (JVM warm-up of the universities service): without the first 10, Spring's p95 is under 2× its median",
		"micro-hello-vs-spring-low":        claims.Reproduced,    // 37 / 10
		"micro-hello-vs-nest-low":          claims.Reproduced,    // 37 / 3
		"micro-hello-vs-nest-high":         claims.Reproduced,    // 150 / 3
		"micro-universities-1s":            claims.Reproduced,    // 1026 ms
		"micro-universities-vs-nest-high":  claims.Reproduced,    // 1026 / 6 = 171
		"nest-leanest":                     claims.NotReproduced, // 155 MiB against micro's 90
		"nest-memory-vs-spring":            claims.Reproduced,    // 155 / 1200
		"nest-memory-vs-micro":             claims.NotReproduced, // 155 / 90
		"micro-most-cpu":                   claims.Reproduced,    // 90.2 / 6.5
		"micro-cpu-vs-spring-high":         claims.Reproduced,    // 13.9×
		"success-micro-hello-high":         claims.Reproduced,    // every answer 150 ms
		"success-spring-universities-high": claims.Reproduced,    // 170 of 200 within 500 ms
		"success-micro-universities-high":  claims.NotReproduced, // a median of 1 s cannot be within 0.5 s
		"spring-warmup-largest":            claims.Holds,         // 8 / 1.5
		"spring-late-not-failed":           claims.DoesNotHold,   // 196 of 200 answered 200
		"nest-least-cpu-per-request":       claims.Holds,
		"parsing-slows-universities":       claims.Holds, // min(30/5, 12/4, 60/3) = 3
		"parsing-costs-cpu":                claims.Holds, // min(4, 5, 4)
		"universities-gap-is-loading":      claims.Holds, // 12 / 6
	}
	claimstest.Verdicts(t, file, res.Metrics, nil, 3, want)
	for id, want := range map[string]float64{
		"warmup-spring-hello":                    8,
		"steady-tail-spring-hello-low":           1,
		"success-pause-spring-universities-high": 170.0 / 200,
		"success-200-spring-universities-high":   196.0 / 200,
		"mem-nest-vs-spring":                     155.0 / 1200,
	} {
		if got := res.Metrics[id].PerRun; len(got) == 0 || !near(got[0], want) {
			t.Errorf("%s %v, want %v", id, got, want)
		}
	}
	// Claims that hold everywhere are every comparison, each a part.
	for id, want := range map[string]float64{
		"cpu-micro-vs-spring-high":                  90.2 / 6.5, // the smaller over the high-load steps
		"parsing-cpu-per-request-universities-high": 4,          // the smaller over the frameworks
	} {
		least := math.Inf(1)
		for _, p := range res.Metrics[id].All {
			least = min(least, p.PerRun[0])
		}
		if !near(least, want) {
			t.Errorf("%s: least part %v, want %v", id, least, want)
		}
	}
	// Percentiles come from HDR histograms, to 3 significant digits.
	if got := res.Metrics["p50-micro-vs-nest-universities-high"].PerRun; len(got) == 0 || math.Abs(got[0]/171-1) > 1e-3 {
		t.Errorf("micro / nest universities high %v, want 171", got)
	}
}

// section finds a section by the start of its title.
func section(t *testing.T, res analysis.Result, prefix string) analysis.Section {
	t.Helper()
	for _, s := range res.Sections {
		if strings.HasPrefix(s.Title, prefix) {
			return s
		}
	}
	t.Fatalf("no section %q", prefix)
	return analysis.Section{}
}

// row finds the row of a table whose first cells are key.
func row(t *testing.T, tb analysis.Table, key ...string) []string {
	t.Helper()
	for _, r := range tb.Rows {
		if strings.Join(r[:len(key)], "|") == strings.Join(key, "|") {
			return r
		}
	}
	t.Fatalf("no row %v in %q", key, tb.Caption)
	return nil
}

// Success both ways, from the records: a step of 100 requests with a
// 500 ms pause, of which 80 are answered 200 within it, 12 answered 200
// after it, 5 answered 502 and 3 never.
func TestSuccessBothWays(t *testing.T) {
	var answers []answer
	add := func(n int, a answer) {
		for range n {
			answers = append(answers, a)
		}
	}
	add(80, answer{120, 200})
	add(12, answer{501, 200})
	add(5, answer{3, 502})
	add(3, answer{30_000, 0})
	answers[10] = answer{500, 200} // exactly the pause counts as within it
	s := summarise(rows(t, answers), 500)
	if s.n != 100 || s.ok200 != 92 || s.inPause != 80 || s.late != 12 {
		t.Fatalf("stats %+v", s)
	}
	if share200(s) != 0.92 || sharePause(s) != 0.80 || failedCount(s) != 8 {
		t.Errorf("200 %v, within the pause %v, not 200 %v", share200(s), sharePause(s), failedCount(s))
	}

	// The same through the report: the step's own pause, 500 ms.
	st := loadStudy(t, "", 1)
	step := st.Load.Steps[3] // universities-high, pause 500ms
	v, _ := analysis.NewDataset(st, nil).Variant(map[string]string{"framework": spring, "load": perRequest})
	ds := analysis.NewDataset(st, []*analysis.Unit{unit(t, v, step.Name, 1, answers, synthResources(st, v, step))})
	res, err := frameworksAnalysis{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	got := row(t, section(t, res, "Success, both ways").Tables[0], universities, high, "500", "spring-per-request")
	if want := []string{"1", "100", "92.00", "80.00", "12", "8"}; strings.Join(got[5:11], "|") != strings.Join(want, "|") {
		t.Errorf("success row %v, want %v", got, want)
	}
}

// rows is answers as the records file gives them back.
func rows(t *testing.T, answers []answer) []records.Row {
	t.Helper()
	dir := results.StepDir(t.TempDir())
	resultstest.WriteOpenStep(t, dir, recordsOf(answers), 50)
	out, err := dir.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The first requests apart from the rest: 10 slow ones by send time, even
// when they are answered after faster later ones.
func TestWarmupSplit(t *testing.T) {
	var answers []answer
	for i := range 100 {
		a := answer{10, 200}
		switch {
		case i < firstN:
			a.ms = 400 + float64(i) // 400 … 409, answered after requests 10 … 49
		case i%15 == 0:
			a.ms = 30 // a steady tail: 6 of the other 90
		}
		answers = append(answers, a)
	}
	s := summarise(rows(t, answers), 1000)
	if !near(s.firstMedian, 404.5) || s.restMedian != 10 || !near(warmup(s), 40.45) {
		t.Errorf("first %v, rest %v, ratio %v", s.firstMedian, s.restMedian, warmup(s))
	}
	// Every request: the p95 (type 7, index 94.05 of 100) falls among
	// the first ones; without them, on the steady tail (index 84.55 of
	// 90, the 6 at 30 ms).
	if !near(s.allP95, 404.05) || s.allP50 != 10 || !near(recordsTail(s), 40.405) {
		t.Errorf("every request: p50 %v, p95 %v", s.allP50, s.allP95)
	}
	if s.restP50 != 10 || s.restP95 != 30 || steadyTail(s) != 3 {
		t.Errorf("steady p50 %v, p95 %v", s.restP50, s.restP95)
	}
	if len(s.head) != headN || s.head[0] != 400 || s.head[10] != 10 {
		t.Errorf("head %v", s.head)
	}
}

// CPU and memory: every process of the variant counts, the registry
// included; per process as recorded.
func TestResources(t *testing.T) {
	st := loadStudy(t, "", 1)
	var units []*analysis.Unit
	ds0 := analysis.NewDataset(st, nil)
	step := st.Load.Steps[1] // hello-high
	for _, fw := range frameworkOrder {
		v, _ := ds0.Variant(map[string]string{"framework": fw, "load": authorsLoad[fw]})
		answers := make([]answer, 200)
		for i := range answers {
			answers[i] = answer{5, 200}
		}
		units = append(units, unit(t, v, step.Name, 1, answers, synthResources(st, v, step)))
	}
	u := units[2] // micro: NATS 2 s, three programs 300 s each
	if got := cpuS(u); !near(got, 902) {
		t.Errorf("micro CPU %v s, want 902 (the registry included)", got)
	}
	if got := cpuPerRequestMs(u); !near(got, 902_000.0/200) {
		t.Errorf("micro CPU per request %v ms", got)
	}
	if got := memMiB(units[0]); got != 1200 {
		t.Errorf("spring memory %v MiB, want 1200 (Eureka's 300 included)", got)
	}
	ds := analysis.NewDataset(st, units)
	var err error
	if ds.Claims, err = claims.Load("../" + claims.FileName); err != nil {
		t.Fatal(err)
	}
	res, err := frameworksAnalysis{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	sec := section(t, res, "CPU time and memory")
	if got := row(t, sec.Tables[0], hello, high, "nest-startup"); strings.Join(got[5:], "|") != "9.00|45.000|155" {
		t.Errorf("nest totals %v", got)
	}
	for _, c := range []struct {
		table int
		fw    string
		want  string
	}{
		{2, nest, perProcess(st, nest, synthCPU, 10, 2)},
		{2, micro, perProcess(st, micro, synthCPU, 10, 2)},
		{3, spring, perProcess(st, spring, synthMiB, 1, 0)},
	} {
		if got := row(t, sec.Tables[c.table], hello, high, c.fw+"-"+authorsLoad[c.fw]); strings.Join(got[3:], "|") != c.want {
			t.Errorf("%s per process %v, want %s", c.fw, got[3:], c.want)
		}
	}
	if !strings.Contains(perProcess(st, nest, synthCPU, 10, 2), "not run") {
		t.Error("nest runs a registry?")
	}
	if got := row(t, sec.Tables[1], hello, high); got[5] != "13.88" || !strings.Contains(got[6], "> 10") {
		t.Errorf("micro / spring CPU %v", got)
	}
	// Each pair a claim compares is a column of its own, never one over
	// the larger or smaller of the others (biased).
	header := strings.Join(sec.Tables[1].Header, "|")
	if strings.Contains(header, "other") || !strings.Contains(header, "|micro / nest CPU|nest / spring CPU per request|nest / micro CPU per request") {
		t.Errorf("resource ratios %q, want every pair the claims compare", header)
	}
	if got := row(t, sec.Tables[1], hello, high); got[7] != "100.22" || got[9] != "0.010" {
		t.Errorf("micro / nest CPU, nest / micro CPU per request %v, want 902 / 9 and its inverse", got)
	}
}

// A run directory as msbench writes it, read back by analysis.Load: the
// first requests of startup.json beside the steady state, and a failed
// variant named in every section that would have shown it.
func TestRunDirectory(t *testing.T) {
	src, err := os.ReadFile("../" + study.FileName)
	if err != nil {
		t.Fatal(err)
	}
	claimsSrc, err := os.ReadFile("../" + claims.FileName)
	if err != nil {
		t.Fatal(err)
	}
	// Quick's short steps, but every variant, as the default profile
	// deploys them: the other loading is what the parsing section reads.
	s := loadStudy(t, "quick", 1)
	s.Only = nil
	run, err := results.Create(t.TempDir(), s.Name, "quick", t0)
	if err != nil {
		t.Fatal(err)
	}
	stand := results.DatasetFile{Path: "/cache/dataset/universities.json", Source: results.DatasetGenerated, Bytes: 2390982, SHA256: strings.Repeat("0", 64)}
	if err := run.WriteProvenance(results.Provenance{Study: s.Name, Profile: "quick", Datasets: map[string]results.DatasetFile{"universities": stand}}); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteStudy(src, s); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteClaims(claimsSrc); err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Runs() {
		if v.Key() == "micro-startup" {
			if err := run.MarkFailed("rep-1/micro-startup", "gateway exited with status 1"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, st := range s.Load.Steps {
			writeStep(t, run.StepDir(1, v.Key(), st.Name), synthAnswers(study.Variant{Values: v.Values}, st, 1), synthResources(s, v, st))
			if err := run.MarkDone(results.UnitKey(1, v.Key(), st.Name)); err != nil {
				t.Fatal(err)
			}
		}
		// Verification: each step's target once, in the steps' order.
		first := []results.FirstRequest{
			{Name: "GET /", Start: t0, LatencyMs: 900, Status: 200},
			{Name: "GET /", Start: t0, LatencyMs: 40, Status: 200},
			{Name: "GET /universities?country=Finland", Start: t0, LatencyMs: 1500, Status: 200},
			{Name: "GET /universities?country=Finland", Start: t0, LatencyMs: 300, Status: 200},
		}
		startup := results.Startup{FirstSuccessS: 30.5, FirstRequests: first,
			Instances: []results.InstanceStartup{{Name: "registry", ReadyS: 12}, {Name: "hello", ReadyS: 25}, {Name: "gateway", ReadyS: 29.5}}}
		if err := run.VariantDir(1, v.Key()).WriteStartup(startup); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := analysis.Load(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Missing) != 1 || !strings.Contains(ds.Missing[0], "micro-startup") {
		t.Errorf("missing %v", ds.Missing)
	}
	res, err := frameworksAnalysis{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	// The report says the data was the stand-in, not the thesis' snapshot.
	if intro := strings.Join(section(t, res, "What is compared").Text, " "); !strings.Contains(intro, "The dataset is generated, not the thesis' snapshot") || !strings.Contains(intro, "2390982 bytes") {
		t.Errorf("the introduction does not say the dataset was generated: %s", intro)
	}
	warm := section(t, res, "Warm-up")
	// Spring: first hello 900 ms against a steady 10 ms: 90×.
	want := []string{"spring-per-request", "1", "29.50 (gateway)", "30.50", "900.0", "1500.0", "10.00", "90.0"}
	if got := row(t, warm.Tables[0], "spring-per-request", "1"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("start-up row %v, want %v", got, want)
	}
	if got := row(t, warm.Tables[1], hello, low, "yes", "spring-per-request"); got[7] != "8.0" || got[8] != "8.0" || got[9] != "1.0" {
		t.Errorf("hello-low warm-up row %v, want first/rest 8, p95/p50 8 with the first requests and 1 without", got)
	}
	if got := row(t, warm.Tables[1], hello, high, "no", "spring-per-request"); got[7] != "1.0" {
		t.Errorf("hello-high, not the first step: %v", got)
	}
	text := strings.Join(warm.Text, "\n")
	if !strings.Contains(text, "micro-startup repetition 1 (no startup.json)") {
		t.Errorf("the failed variant's start-up is not named:\n%s", text)
	}
	for _, title := range []string{"Request duration", "Success, both ways", "CPU time and memory", "Warm-up", "The dataset parsed"} {
		text := strings.Join(section(t, res, title).Text, "\n")
		for _, st := range s.Load.Steps {
			if !strings.Contains(text, "micro-startup "+st.Name) {
				t.Errorf("section %q does not name micro-startup %s:\n%s", title, st.Name, text)
			}
		}
	}
	// The paper's figures beside ours come from the run's claims.yaml.
	if got := row(t, section(t, res, "Request duration").Tables[1], universities, high); got[5] != "171" {
		t.Errorf("thesis micro / nest %v", got)
	}
	if header := strings.Join(section(t, res, "Request duration").Tables[1].Header, "|"); strings.Contains(header, "other") || !strings.HasSuffix(header, "|nest / spring") {
		t.Errorf("ratios of medians %q, want each pair, none over the faster of the others", header)
	}
	if c := res.Metrics["parsing-p50-universities-low"]; len(c.All) != 2 || c.All[0].Label != spring || c.All[1].Label != nest {
		t.Errorf("parsing metric over the frameworks measured both ways: %+v", c)
	}
}

// What the profile skipped and a framework the run lacks are named, and
// no ratio is formed with what was not measured.
func TestUnmeasuredIsNamed(t *testing.T) {
	s := loadStudy(t, "", 1)
	dir := t.TempDir()
	src, err := os.ReadFile("../" + study.FileName)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, study.FileName), src, 0o644); err != nil {
		t.Fatal(err)
	}
	// As a profile that skipped universities-high and ran no micro; and a
	// pause parameter that disagrees with the step's think time.
	s.Load.Steps = s.Load.Steps[:3]
	s.Load.Steps[0].Load.Think = load.Think{Min: 2 * time.Second, Max: 2 * time.Second}
	for i := range s.Variants {
		if s.Variants[i].Name == "framework" {
			s.Variants[i].Values = []string{spring, nest}
		}
	}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for _, st := range s.Load.Steps {
			if v.Key() == "nest-startup" && st.Name == "hello-high" {
				continue // the variant failed during this step
			}
			units = append(units, unit(t, v, st.Name, 1, synthAnswers(v, st, 1), synthResources(s, v, st)))
		}
	}
	ds := analysis.NewDataset(s, units)
	ds.Dir = dir
	res, err := frameworksAnalysis{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Request duration", "Success, both ways", "CPU time and memory", "Warm-up", "The dataset parsed"} {
		text := strings.Join(section(t, res, title).Text, "\n")
		for _, w := range []string{"universities-high (every variant)", "micro-per-request (every step)", "micro-startup (every step)", "nest-startup hello-high"} {
			if !strings.Contains(text, w) {
				t.Errorf("section %q does not name %q:\n%s", title, w, text)
			}
		}
		if strings.Contains(text, "spring-per-request hello-low") {
			t.Errorf("section %q names a measured step as not measured", title)
		}
	}
	if intro := strings.Join(section(t, res, "What is compared").Text, "\n"); !strings.Contains(intro, "Step hello-low pauses 2s–2s after each request, but its pause parameter (k6's time-out here) is 1000 ms") {
		t.Errorf("the disagreeing pause is not named:\n%s", intro)
	}
	for _, id := range []string{"p50-micro-vs-spring-hello-low", "cpu-micro-vs-most-other", "p50-micro-universities-high", "success-pause-spring-universities-high"} {
		if _, ok := res.Metrics[id]; ok {
			t.Errorf("metric %s measured without its data", id)
		}
	}
	// Nest fastest is nest against spring and against micro in every
	// step: the comparisons with the absent micro stay, unmeasured, so
	// the claim cannot hold on spring alone.
	nestFastest := res.Metrics["p50-nest-vs-best-other"]
	unmeasured := 0
	for _, p := range nestFastest.All {
		if strings.HasPrefix(p.Label, "nest/micro") && len(p.PerRun) == 0 {
			unmeasured++
		}
	}
	if unmeasured == 0 || unmeasured != len(nestFastest.All)/2 {
		t.Errorf("nest against spring and an absent micro: %+v", nestFastest)
	}
	below := 1.0
	if r := claims.Judge(claims.Claim{ID: "nest-fastest", Metric: "p50-nest-vs-best-other", Expect: claims.Expect{Below: &below}}, res.Metrics, nil); r.Verdict != claims.Inconclusive {
		t.Errorf("nest fastest with micro absent: %s (%s)", r.Verdict, r.Why)
	}
	if _, ok := res.Metrics["warmup-spring-hello"]; !ok {
		t.Error("spring's warm-up, which was measured, is missing")
	}
}

// Quick deploys each framework with its authors' loading only: the
// claims' metrics are all there, our findings on the loading are not
// measured, and the loading section says why instead of a table of
// one-sided rows.
func TestAuthorsLoadingOnly(t *testing.T) {
	s := loadStudy(t, "quick", 3)
	if got := len(s.Matrix()); got != len(frameworkOrder) {
		t.Fatalf("quick deploys %d variants, want one per framework", got)
	}
	var units []*analysis.Unit
	for rep := 1; rep <= s.Repetitions; rep++ {
		for _, v := range s.Matrix() {
			if authorsLoad[v.Get("framework")] != v.Get("load") {
				t.Fatalf("quick deploys %s, not the authors' loading", v.Key())
			}
			for _, st := range s.Load.Steps {
				units = append(units, unit(t, v, st.Name, rep, synthAnswers(v, st, rep), synthResources(s, v, st)))
			}
		}
	}
	res, err := frameworksAnalysis{}.Analyze(analysis.NewDataset(s, units))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := claims.Load("../" + claims.FileName)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cf.Claims {
		if m, ok := res.Metrics[c.Metric]; !c.Ours && (!ok || len(m.PerRun)+len(m.All) == 0) {
			t.Errorf("the thesis' claim %s: metric %s not measured", c.ID, c.Metric)
		}
	}
	for _, id := range []string{"parsing-p50-universities-low", "parsing-cpu-per-request-universities-high", "p50-micro-vs-nest-universities-high-startup"} {
		if m, ok := res.Metrics[id]; ok && len(m.PerRun)+len(m.All) > 0 {
			t.Errorf("metric %s measured without the other loading: %+v", id, m)
		}
	}
	loading := section(t, res, "The dataset parsed")
	if len(loading.Tables) != 0 || !strings.Contains(strings.Join(loading.Text, " "), "deployed no framework both ways") {
		t.Errorf("loading section with no pair: %d tables, text %q", len(loading.Tables), loading.Text)
	}
}

// A study file without a step the analysis reads is refused, naming what
// is missing; the study's own file passes, claims and all.
func TestNeeds(t *testing.T) {
	s := loadStudy(t, "", 5)
	if err := analysis.Check(s); err != nil {
		t.Fatalf("studies/frameworks: %v", err)
	}
	for _, profile := range []string{"quick", "paper"} {
		if err := analysis.Check(loadStudy(t, profile, 1)); err != nil {
			t.Errorf("profile %s: %v", profile, err)
		}
	}
	s.Load.Steps = s.Load.Steps[:3]
	err := s.Check(frameworksAnalysis{}.Needs())
	if err == nil || !strings.Contains(err.Error(), "needs a step with params app=universities, level=high") {
		t.Fatalf("a study without universities at high load: %v", err)
	}
	s = loadStudy(t, "", 1)
	delete(s.Load.Steps[0].Params, "pause")
	if err := s.CheckRun(frameworksAnalysis{}.Needs()); err == nil || !strings.Contains(err.Error(), `parameter "pause"`) {
		t.Fatalf("a step without its pause: %v", err)
	}
}
