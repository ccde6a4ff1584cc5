package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
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
	run, err := results.Create(t.TempDir(), "svc", "quick", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteProvenance(results.Provenance{Study: "svc", Profile: "quick"}); err != nil {
		t.Fatal(err)
	}
	s := &study.Study{Name: "svc", Repetitions: reps, Variants: []study.Axis{{Name: "impl", Values: []string{"go"}}}, Load: study.Plan{Service: "api"}}
	for _, name := range steps {
		s.Load.Steps = append(s.Load.Steps, &study.Step{Name: name})
	}
	if err := run.WriteStudy(nil, s); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 6))
	for rep := 1; rep <= reps; rep++ {
		offset := math.Exp(0.02 * r.NormFloat64())
		for _, step := range steps {
			dir := run.StepDir(rep, "go", step)
			synthLoad(t, dir, 4000, scale*offset, seed*100+uint64(rep))
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

func msbench(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// One load a side: a real 20% regression breaks p99>+10% (exit 1, one line
// saying which), an A/A pair (same distribution, another seed) passes
// (exit 0), and --json gives the machine-readable form.
func TestCompareLoadDirs(t *testing.T) {
	base := loadDir(t, 1, 1)
	slower := loadDir(t, 1.2, 2)
	same := loadDir(t, 1, 3)

	code, stdout, stderr := msbench("compare", "--fail-if", "p99>+10%", "--fail-if", "throughput<-5%", base, slower)
	t.Logf("regression:\n%s%s", stdout, stderr)
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--fail-if p99>+10%: load: p99 1.") {
		t.Errorf("a 20%% p99 regression: exit %d, stderr %q; want 1 and one line naming p99>+10%%", code, stderr)
	}
	for _, want := range []string{"block-bootstrap", "p99 ms", "slower", "fail-if p99>+10%: FAILED", "fail-if throughput<-5%: passed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	code, stdout, stderr = msbench("compare", "--fail-if", "p99>+10%", "--fail-if", "mean>+5%", "--fail-if", "throughput<-5%", "--fail-if", "errors>+1%", base, same)
	t.Logf("A/A:\n%s%s", stdout, stderr)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "fail-if p99>+10%: passed") {
		t.Errorf("an A/A pair: exit %d, stderr %q; want 0", code, stderr)
	}

	code, stdout, _ = msbench("compare", "--json", "--fail-if", "p99>+10%", base, slower)
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
		FailIf []struct {
			Rule     string `json:"rule"`
			Breached bool   `json:"breached"`
		} `json:"fail_if"`
		Failed bool `json:"failed"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if code != 1 || !report.Failed || len(report.Comparisons) != 1 || report.Comparisons[0].Method != "block-bootstrap" ||
		len(report.FailIf) != 1 || !report.FailIf[0].Breached {
		t.Errorf("--json: exit %d, %+v", code, report)
	}
	for _, m := range report.Comparisons[0].Metrics {
		if m.Metric == "p99" && (m.Verdict != "slower" || m.Lo == nil || *m.Lo <= 1.1 || math.Abs(m.Estimate-1.2) > 0.1) {
			t.Errorf("--json p99: %+v", m)
		}
	}
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
