package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/results/resultstest"
	"github.com/msbench/msbench/internal/study"
)

// synthLoad writes what msbench load --out writes for an open-model load
// of n requests at 500/s whose latencies are exp(AR(1)) around 2 ms
// (autocorrelated, φ = 0.5, as real ones are) times scale, drawn with
// seed: records.parquet in the order answers arrived, and summary.json
// from the aggregator the engine uses.
func synthLoad(t *testing.T, dir results.StepDir, n int, scale float64, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 5))
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	const phi = 0.5
	x := r.NormFloat64() / math.Sqrt(1-phi*phi)
	recs := make([]metrics.Record, n)
	for i := range recs {
		at := start + int64(i)*2_000_000
		recs[i] = metrics.Record{Seq: uint64(i), Intended: at, Sent: at, Done: at + int64(2e6*scale*math.Exp(0.4*x)), Status: 200}
		x = phi*x + r.NormFloat64()
	}
	resultstest.WriteOpenStep(t, dir, recs, 500)
}

// loadDir is a load directory of 30,000 requests (a minute at 500/s):
// enough for a p99 to be known within a few per cent.
func loadDir(t *testing.T, scale float64, seed uint64) string {
	dir := t.TempDir()
	synthLoad(t, results.StepDir(dir), 30000, scale, seed)
	return dir
}

// runDir writes a run directory of msbench run: one variant, the given
// steps, reps repetitions, each repetition's latencies scaled by a
// run-to-run offset of 2%.
func runDir(t *testing.T, steps []string, reps int, scale float64, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 6))
	scales := make([]float64, reps)
	for i := range scales {
		scales[i] = scale * math.Exp(0.02*r.NormFloat64())
	}
	return runDirScales(t, steps, scales, seed)
}

// runDirScales is runDir with each repetition's scale given.
func runDirScales(t *testing.T, steps []string, scales []float64, seed uint64) string {
	t.Helper()
	run, err := results.Create(t.TempDir(), "svc", "quick", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteProvenance(results.Provenance{Study: "svc", Profile: "quick"}); err != nil {
		t.Fatal(err)
	}
	s := &study.Study{Name: "svc", Repetitions: len(scales), Variants: []study.Axis{{Name: "impl", Values: []string{"go"}}}, Load: study.Plan{Service: "api"}}
	for _, name := range steps {
		s.Load.Steps = append(s.Load.Steps, &study.Step{Name: name})
	}
	if err := run.WriteStudy(nil, s); err != nil {
		t.Fatal(err)
	}
	for i, scale := range scales {
		rep := i + 1
		for _, step := range steps {
			dir := run.StepDir(rep, "go", step)
			synthLoad(t, dir, 4000, scale, seed*100+uint64(rep))
			if err := dir.WriteResources(results.StepResources{Method: "proc"}); err != nil {
				t.Fatal(err)
			}
			if err := run.MarkDone(results.UnitKey(rep, "go", step)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return run.Dir
}

// loadsDir writes a directory of several load directories, one per scale
// (each a run of 4,000 requests), as a CI job repeating a load would.
func loadsDir(t *testing.T, scales []float64, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	for i, scale := range scales {
		synthLoad(t, results.StepDir(filepath.Join(dir, fmt.Sprintf("load-%d", i+1))), 4000, scale, seed*100+uint64(i))
	}
	return dir
}

func msbench(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// One load a side: the comparison shows the block bootstrap's verdicts,
// and --json gives the machine-readable form.
func TestCompareLoadDirs(t *testing.T) {
	base := loadDir(t, 1, 1)
	slower := loadDir(t, 1.2, 2)

	code, stdout, stderr := msbench("compare", base, slower)
	t.Logf("regression:\n%s%s", stdout, stderr)
	if code != 0 || stderr != "" {
		t.Errorf("no rules: exit %d, stderr %q; want 0", code, stderr)
	}
	for _, want := range []string{"block-bootstrap", "p99 ms", "slower", "run-to-run variation is not in these intervals"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	code, stdout, _ = msbench("compare", "--json", base, slower)
	var report struct {
		Comparisons []struct {
			Method  string `json:"method"`
			Metrics []struct {
				Metric   string   `json:"metric"`
				Estimate float64  `json:"estimate"`
				Lo       *float64 `json:"ci_lo"`
				Hi       *float64 `json:"ci_hi"`
				Verdict  string   `json:"verdict"`
			} `json:"metrics"`
		} `json:"comparisons"`
		Failed bool `json:"failed"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if code != 0 || report.Failed || len(report.Comparisons) != 1 || report.Comparisons[0].Method != "block-bootstrap" {
		t.Errorf("--json: exit %d, %+v", code, report)
	}
	for _, m := range report.Comparisons[0].Metrics {
		if m.Metric == "p99" && (m.Verdict != "slower" || m.Lo == nil || *m.Lo <= 1.1 || math.Abs(m.Estimate-1.2) > 0.1) {
			t.Errorf("--json p99: %+v", m)
		}
	}
}

// Issue 20, item 5: with one run a side the block bootstrap's interval
// holds no run-to-run variation, so a gate on it fails identical systems
// that deployments set 20% apart about a quarter of the time. --fail-if
// refuses it (exit 2, one line), for a regression and an A/A pair alike;
// with A/A runs as a noise model it gates: the 20% regression fails
// (exit 1), the A/A pair passes (exit 0). Before the fix the first call
// exited 1 and the second 0, from within-run variation alone.
func TestCompareOneRunASideGate(t *testing.T) {
	base := loadDir(t, 1, 1)
	slower := loadDir(t, 1.2, 2)
	same := loadDir(t, 1, 3)
	for _, next := range []string{slower, same} {
		code, stdout, stderr := msbench("compare", "--fail-if", "p99>+10%", base, next)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "one run a side") || stdout != "" {
			t.Errorf("--fail-if on one run a side: exit %d, stderr %q; want 2 and one line saying why", code, stderr)
		}
	}
	aa := t.TempDir()
	for i := range 6 {
		synthLoad(t, results.StepDir(filepath.Join(aa, fmt.Sprintf("aa-%d", i))), 30000, 1, 10+uint64(i))
	}
	code, stdout, stderr := msbench("compare", "--noise", aa, "--fail-if", "p99>+10%", "--fail-if", "throughput<-5%", base, slower)
	t.Logf("regression with --noise:\n%s%s", stdout, stderr)
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--fail-if p99>+10%: load: p99 1.") {
		t.Errorf("a 20%% p99 regression with --noise: exit %d, stderr %q; want 1 and one line naming p99>+10%%", code, stderr)
	}
	for _, want := range []string{"noise-model", "from 3 A/A pairs", "gate: 2 tests", "fail-if p99>+10%: FAILED", "fail-if throughput<-5%: passed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, stdout, stderr = msbench("compare", "--noise", aa, "--fail-if", "p99>+10%", "--fail-if", "mean>+5%", "--fail-if", "throughput<-5%", "--fail-if", "errors>+1%", base, same)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "fail-if p99>+10%: passed") {
		t.Errorf("an A/A pair with --noise: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if code, _, stderr := msbench("compare", "--noise", base, "--fail-if", "p99>+10%", base, same); code != 2 || !strings.Contains(stderr, "a single load") {
		t.Errorf("--noise with one load: exit %d, stderr %q; want 2", code, stderr)
	}
}

// A side may be a directory of several load directories, each one run:
// three a side are compared run by run (Fieller), and one against three
// takes its spread from the three, never concatenating them.
func TestCompareSeveralLoads(t *testing.T) {
	base := loadsDir(t, []float64{1, 1.03, 0.98}, 1)
	slower := loadsDir(t, []float64{1.3, 1.28, 1.33}, 2)
	same := loadsDir(t, []float64{1.01, 0.99, 1.02}, 3)
	code, stdout, stderr := msbench("compare", "--fail-if", "p50>+10%", base, slower)
	t.Logf("regression:\n%s%s", stdout, stderr)
	if code != 1 || !strings.Contains(stdout, "(loads)") || !strings.Contains(stdout, "load — runs: 3 vs 3 runs") || !strings.Contains(stderr, "p50>+10%: load: p50 1.") {
		t.Errorf("3 vs 3 loads, 30%% slower: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := msbench("compare", "--fail-if", "p99>+10%", "--fail-if", "p50>+10%", base, same); code != 0 {
		t.Errorf("A/A, 3 vs 3 loads: exit %d\n%s%s", code, stdout, stderr)
	}
	one := loadDir(t, 1.3, 4)
	code, stdout, stderr = msbench("compare", "--json", "--fail-if", "p50>+10%", base, one)
	var report struct {
		Comparisons []struct {
			Method   string `json:"method"`
			BaseRuns int    `json:"base_runs"`
			NewRuns  int    `json:"new_runs"`
		} `json:"comparisons"`
		Gate struct {
			Correction string  `json:"correction"`
			Tests      int     `json:"tests"`
			TestLevel  float64 `json:"test_level"`
		} `json:"gate"`
		FailIf []struct {
			Method   string `json:"method"`
			BaseRuns int    `json:"base_runs"`
			NewRuns  int    `json:"new_runs"`
			Breached bool   `json:"breached"`
		} `json:"fail_if"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("--json: %v\n%s%s", err, stdout, stderr)
	}
	c := report.Comparisons[0]
	if c.Method != "one-vs-runs" || c.BaseRuns != 3 || c.NewRuns != 1 || report.Gate.Correction != "bonferroni" || report.Gate.Tests != 1 ||
		len(report.FailIf) != 1 || report.FailIf[0].Method != "one-vs-runs" || report.FailIf[0].BaseRuns != 3 {
		t.Errorf("3 loads vs 1: exit %d, %+v", code, report)
	}
}

// Issue 20, item 6: Fieller's interval for two runs a side spread 80%
// apart on BASE is unbounded, which says nothing: the verdict is unknown,
// not "same (within noise)" as before the fix; and its lower end, negative
// before the fix for NEW spread wide, is cut at 0 (a ratio of latencies).
func TestCompareUnboundedAndNegativeIntervals(t *testing.T) {
	wide := runDirScales(t, []string{"steady"}, []float64{1, 1.8}, 1)
	two := runDirScales(t, []string{"steady"}, []float64{1, 1.1}, 2)
	code, stdout, stderr := msbench("compare", "--fail-if", "p50>+10%", wide, two)
	t.Logf("unbounded:\n%s%s", stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "p50 ms") || strings.Count(stdout, "unknown (unbounded interval)") < 4 || strings.Contains(stdout, "ms  same") {
		t.Errorf("2 vs 2 runs, BASE 80%% apart: exit %d; want every latency unknown, none the same", code)
	}
	if !strings.Contains(stdout, "fail-if p50>+10%: passed (1 comparison; 1 unknown)") {
		t.Errorf("the gate does not say it was blind")
	}

	steady := runDirScales(t, []string{"steady"}, []float64{1, 1.01, 1.02}, 3)
	spread := runDirScales(t, []string{"steady"}, []float64{0.01, 0.5}, 4)
	_, stdout, _ = msbench("compare", "--json", steady, spread)
	var report struct {
		Comparisons []struct {
			Metrics []struct {
				Metric string   `json:"metric"`
				Change string   `json:"change"`
				Lo     *float64 `json:"ci_lo"`
			} `json:"metrics"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	negative := 0
	for _, m := range report.Comparisons[0].Metrics {
		if m.Change == "ratio" && m.Lo != nil && *m.Lo < 0 {
			negative++
			t.Errorf("%s: NEW/BASE interval from %v", m.Metric, *m.Lo)
		}
	}
	t.Logf("%d negative lower ends\n%s", negative, stdout)
}

// Run directories with repetitions: the interval comes from the runs.
func TestCompareRunDirs(t *testing.T) {
	base := runDir(t, []string{"steady"}, 5, 1, 1)
	slower := runDir(t, []string{"steady"}, 5, 1.2, 2)
	same := runDir(t, []string{"steady"}, 5, 1, 3)
	code, stdout, stderr := msbench("compare", "--fail-if", "p50>+10%", base, slower)
	t.Logf("regression:\n%s%s", stdout, stderr)
	if code != 1 || !strings.Contains(stdout, "steady go — runs: 5 vs 5 runs") || !strings.Contains(stderr, "p50>+10%: steady go") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := msbench("compare", "--fail-if", "p99>+10%", "--fail-if", "p50>+5%", base, same); code != 0 {
		t.Errorf("A/A run directories: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestCompareBadUsageIsOneLineAndExit2(t *testing.T) {
	load := loadDir(t, 1, 1)
	empty := t.TempDir()
	steady := runDir(t, []string{"steady"}, 1, 1, 1)
	burst := runDir(t, []string{"burst", "spike"}, 1, 1, 2)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one directory", []string{"compare", load}, "two directories"},
		{"unknown metric", []string{"compare", "--fail-if", "p95>+10%", load, load}, "unknown metric \"p95\""},
		{"malformed rule", []string{"compare", "--fail-if", "p99>10", load, load}, "want METRIC>+X%"},
		{"wrong direction", []string{"compare", "--fail-if", "throughput>+5%", load, load}, "throughput<-5%"},
		{"neither kind", []string{"compare", empty, load}, "neither a run directory"},
		{"missing", []string{"compare", load, empty + "/nope"}, "no such file"},
		{"nothing in common", []string{"compare", steady, burst}, "nothing in common"},
		{"few resamples", []string{"compare", "--resamples", "5", load, load}, "--resamples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := msbench(tt.args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q: want 2 and one line mentioning %q", code, stderr, stdout, tt.want)
			}
		})
	}
}
