package compare

import (
	"encoding/json"
	"fmt"
	"maps"
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

// load describes a synthetic load: open model at rps for n requests,
// latencies exp(AR(1)) around medianMs scaled by scale (autocorrelated as
// real ones are, φ = 0.5), every failEvery-th request failing.
type load struct {
	n         int
	rps       float64
	medianMs  float64
	scale     float64
	failEvery int
	seed      uint64
}

func (l load) records() []metrics.Record {
	r := rand.New(rand.NewPCG(l.seed, 99))
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	const phi = 0.5
	x := r.NormFloat64() / math.Sqrt(1-phi*phi)
	recs := make([]metrics.Record, l.n)
	for i := range recs {
		latMs := l.medianMs * l.scale * math.Exp(0.4*x)
		x = phi*x + r.NormFloat64()
		at := start + int64(float64(i)*1e9/l.rps)
		recs[i] = metrics.Record{Seq: uint64(i), Intended: at, Sent: at, Done: at + int64(latMs*1e6), Status: 200, BytesIn: 100}
		if l.failEvery > 0 && i%l.failEvery == 0 {
			recs[i].Status, recs[i].Err = 503, metrics.Status
		}
	}
	return recs
}

// writeStep writes summary.json and records.parquet as msbench load
// --out does: records in the order answers arrived, the summary from the
// same aggregator the engine uses.
func writeStep(t testing.TB, dir results.StepDir, l load) metrics.Summary {
	t.Helper()
	return resultstest.WriteOpenStep(t, dir, l.records(), l.rps)
}

func writeLoadDir(t testing.TB, l load) string {
	dir := t.TempDir()
	writeStep(t, results.StepDir(dir), l)
	return dir
}

// writeRunDir writes a run directory of one variant and one step with one
// repetition per load, through the same writers msbench run uses.
func writeRunDir(t testing.TB, loads []load) string {
	t.Helper()
	run, err := results.Create(t.TempDir(), "svc", "quick", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteProvenance(results.Provenance{Study: "svc", Profile: "quick"}); err != nil {
		t.Fatal(err)
	}
	s := &study.Study{Name: "svc", Repetitions: len(loads), Variants: []study.Axis{{Name: "impl", Values: []string{"go"}}},
		Load: study.Plan{Service: "api", Steps: []*study.Step{{Name: "steady"}}}}
	if err := run.WriteStudy(nil, s); err != nil {
		t.Fatal(err)
	}
	for i, l := range loads {
		dir := run.StepDir(i+1, "go", "steady")
		writeStep(t, dir, l)
		if err := dir.WriteResources(results.StepResources{Method: "proc"}); err != nil {
			t.Fatal(err)
		}
		if err := run.MarkDone(results.UnitKey(i+1, "go", "steady")); err != nil {
			t.Fatal(err)
		}
	}
	return run.Dir
}

func compareDirs(t *testing.T, base, new string, rules ...string) *Report {
	t.Helper()
	r, err := compareWith(t, base, new, Options{Seed: 1}, rules...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// compareWith is compareDirs with options, returning Apply's error.
func compareWith(t *testing.T, base, new string, opt Options, rules ...string) (*Report, error) {
	t.Helper()
	b, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(new)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare(b, n, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.Apply(parseRules(t, rules...))
}

func parseRules(t testing.TB, texts ...string) []Rule {
	t.Helper()
	var parsed []Rule
	for _, text := range texts {
		rule, err := ParseRule(text)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, rule)
	}
	return parsed
}

func verdicts(c *Comparison) map[string]string {
	out := map[string]string{}
	for _, m := range c.Metrics {
		out[m.Metric] = m.Verdict
	}
	return out
}

// One load a side, NEW 20% slower throughout and failing 2% of requests:
// the block bootstrap calls latency slower with the interval around 1.2,
// throughput the same (the open model sends at the same rate), errors
// more. The gate refuses one run a side; given a noise model of A/A loads
// as long as these, p99>+10% is breached and p99>+30% is not.
func TestCompareLoadDirsRegression(t *testing.T) {
	base := writeLoadDir(t, load{n: 10000, rps: 500, medianMs: 2, scale: 1, seed: 1})
	new := writeLoadDir(t, load{n: 10000, rps: 500, medianMs: 2, scale: 1.2, failEvery: 50, seed: 2})
	rules := []string{"p99>+10%", "p99>+30%", "throughput<-5%", "errors>+1%"}
	if _, err := compareWith(t, base, new, Options{Seed: 1}, rules...); !isUsage(err) || !strings.Contains(err.Error(), "one run a side") {
		t.Errorf("--fail-if on one run a side without a noise model: %v, want a usage error", err)
	}
	r := compareDirs(t, base, new)
	if len(r.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want the one load", len(r.Comparisons))
	}
	c := &r.Comparisons[0]
	if c.Method != MethodBlock || c.Label() != "load" || c.BaseRequests != 10000 {
		t.Fatalf("comparison %+v", c)
	}
	want := map[string]string{"p50": VerdictSlower, "p90": VerdictSlower, "p99": VerdictSlower, "mean": VerdictSlower,
		"throughput": VerdictSame, "errors": VerdictMoreErrors}
	if got := verdicts(c); !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if p99 := c.Metric("p99"); !(p99.Lo < 1.2 && 1.2 < p99.Hi) || p99.Hi-p99.Lo > 0.2 {
		t.Errorf("p99: %.3f (%.3f–%.3f), want an interval around the true 1.2", p99.Estimate, p99.Lo, p99.Hi)
	}
	for _, m := range []string{"p50", "p90", "mean"} {
		if res := c.Metric(m); math.Abs(float64(res.Estimate)-1.2) > 0.05 || !(res.Lo > 1.1 && res.Hi < 1.3) {
			t.Errorf("%s: %.3f (%.3f–%.3f), want about 1.2", m, res.Estimate, res.Lo, res.Hi)
		}
	}
	if e := c.Metric("errors"); !(e.Lo < 0.02 && 0.02 < e.Hi) {
		t.Errorf("errors: %+v, want an interval around +2 points", e)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + text.String())
	for _, s := range []string{"block-bootstrap", "run-to-run variation is not in these intervals", "p99 ms", "slower"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text lacks %q", s)
		}
	}

	// Six A/A loads, three pairs: the spread within runs of this length
	// (no deployment offsets here), which the noise model then carries.
	aa := t.TempDir()
	for i := range 6 {
		writeStep(t, results.StepDir(filepath.Join(aa, fmt.Sprintf("aa-%d", i))), load{n: 10000, rps: 500, medianMs: 2, scale: 1, seed: 100 + uint64(i)})
	}
	noise, err := OpenNoise(aa)
	if err != nil {
		t.Fatal(err)
	}
	r, err = compareWith(t, base, new, Options{Seed: 1, Noise: noise}, rules...)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Comparisons[0]; c.Method != MethodNoise || noise.Pairs != 3 {
		t.Fatalf("with --noise: method %s, %d pairs", c.Method, noise.Pairs)
	}
	breached := map[string]bool{}
	for _, res := range r.FailIf {
		breached[res.Rule] = res.Breached
	}
	if !breached["p99>+10%"] || breached["p99>+30%"] || breached["throughput<-5%"] || !breached["errors>+1%"] || !r.Failed {
		t.Errorf("rules %v", breached)
	}
	if g := r.Gate; g == nil || g.Tests != 4 || g.Correction != CorrectionBonferroni || math.Abs(g.TestLevel-(1-0.05/4)) > 1e-12 {
		t.Errorf("gate %+v, want Bonferroni over 4 tests at 98.75%%", g)
	}
	text.Reset()
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + text.String())
	for _, s := range []string{"noise-model", "NOISE " + aa + " (loads)", "p99: σ ", "gate: 4 tests", "one-sided 98.75%", "fail-if p99>+10%: FAILED", "fail-if p99>+30%: passed"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text lacks %q", s)
		}
	}
}

// A/A with single runs: the same system loaded twice (different seeds,
// no deployment offsets) gets verdicts that are mostly "same": over 8
// pairs and 6 metrics, a 95% block-bootstrap interval should miss in about
// 5% of them.
func TestCompareLoadDirsAA(t *testing.T) {
	different := 0
	for seed := range uint64(8) {
		base := writeLoadDir(t, load{n: 3000, rps: 500, medianMs: 2, scale: 1, seed: 10 + 2*seed})
		new := writeLoadDir(t, load{n: 3000, rps: 500, medianMs: 2, scale: 1, seed: 11 + 2*seed})
		r := compareDirs(t, base, new)
		for m, v := range verdicts(&r.Comparisons[0]) {
			if v != VerdictSame {
				different++
				t.Logf("A/A pair %d: %s %s", seed, m, v)
			}
		}
	}
	if different > 6 {
		t.Errorf("%d of 48 A/A verdicts say different, want about 5%%", different)
	}
}

// Run directories with five repetitions a side: the interval comes from
// the runs. NEW is 20% slower with a 2% run-to-run offset on both sides.
func TestCompareRunDirs(t *testing.T) {
	reps := func(scale float64, seed uint64) []load {
		r := rand.New(rand.NewPCG(seed, 1))
		var out []load
		for i := range 5 {
			out = append(out, load{n: 4000, rps: 400, medianMs: 3, scale: scale * math.Exp(0.02*r.NormFloat64()), seed: seed*10 + uint64(i)})
		}
		return out
	}
	base := writeRunDir(t, reps(1, 1))
	slow := writeRunDir(t, reps(1.2, 2))
	same := writeRunDir(t, reps(1, 3))
	r := compareDirs(t, base, slow, "p99>+10%", "p50>+50%")
	c := &r.Comparisons[0]
	if c.Method != MethodRuns || c.Label() != "steady go" || c.BaseRuns != 5 || c.NewRuns != 5 {
		t.Fatalf("comparison %+v", c)
	}
	if v := verdicts(c); v["p50"] != VerdictSlower || v["p99"] != VerdictSlower || v["throughput"] != VerdictSame || v["errors"] != VerdictSame {
		t.Errorf("verdicts %v", v)
	}
	// One draw: the interval need not contain 1.2 (it does 95% of the
	// time, see the stats package's tests), but it must be near and tight.
	if p99 := c.Metric("p99"); math.Abs(float64(p99.Estimate)-1.2) > 0.07 || p99.Hi-p99.Lo > 0.15 || p99.NUnit != "runs" || p99.BaseN != 5 {
		t.Errorf("p99 %+v, want about 1.2 from 5 runs", p99)
	}
	if got := r.Breaches(); len(got) != 1 || !strings.HasPrefix(got[0], "p99>+10%: steady go: p99 1.") {
		t.Errorf("breaches %q, want p99>+10%% alone", got)
	}
	if r := compareDirs(t, base, same, "p99>+10%", "p50>+5%"); r.Failed {
		t.Errorf("A/A run directories breached %v", r.Breaches())
	}
	// A run directory with one step of one variant against a load
	// directory: the two single cells are compared.
	one := writeRunDir(t, reps(1, 4)[:1])
	ld := writeLoadDir(t, load{n: 2000, rps: 400, medianMs: 3, scale: 1, seed: 77})
	r = compareDirs(t, one, ld)
	if c := r.Comparisons[0]; c.Method != MethodBlock || c.Label() != "steady go vs load" {
		t.Errorf("run vs load: %s %s", c.Label(), c.Method)
	}
	// Three runs against one: the three give the spread, the detail says
	// so, and the gate may read it.
	r = compareDirs(t, writeRunDir(t, reps(1, 5)[:3]), one, "p99>+10%")
	if c := r.Comparisons[0]; c.Method != MethodOneVsRuns || !strings.Contains(c.MethodDetail, "BASE's 3 runs' (not concatenated)") ||
		c.Metric("p99").NUnit != "runs" || r.Gate == nil || r.Gate.Tests != 1 {
		t.Errorf("3 vs 1 runs: %s: %s", c.Method, c.MethodDetail)
	}
}

func TestCompareOpenAndMatchUsage(t *testing.T) {
	empty := t.TempDir()
	if _, err := Open(empty); !isUsage(err) || !strings.Contains(err.Error(), "neither a run directory") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := Open(filepath.Join(empty, "nope")); !isUsage(err) {
		t.Errorf("missing directory: %v", err)
	}
	run := writeRunDir(t, []load{{n: 100, rps: 100, medianMs: 1, scale: 1, seed: 1}})
	b, _ := Open(run)
	other := &Source{Dir: "x", Kind: KindRun, Cells: []*Cell{{Step: "burst", Variant: "go"}, {Step: "steady", Variant: "java"}}}
	if _, err := Compare(b, other, Options{}); !isUsage(err) || !strings.Contains(err.Error(), "nothing in common") {
		t.Errorf("nothing in common: %v", err)
	}
}

func isUsage(err error) bool {
	_, ok := err.(UsageError)
	return ok
}

func TestCompareParseRule(t *testing.T) {
	good := []struct {
		text   string
		metric string
		limit  float64
	}{
		{"p99>+10%", "p99", 1.10},
		{"p50>10%", "p50", 1.10},
		{" mean > + 2.5 % ", "mean", 1.025},
		{"p90>+0%", "p90", 1},
		{"throughput<-5%", "throughput", 0.95},
		{"throughput<5%", "throughput", 0.95},
		{"errors>+1%", "errors", 0.01},
	}
	for _, g := range good {
		r, err := ParseRule(g.text)
		if err != nil || r.Metric.Name != g.metric || math.Abs(r.Limit()-g.limit) > 1e-12 {
			t.Errorf("ParseRule(%q) = %+v (limit %v), %v; want %s limit %v", g.text, r, r.Limit(), err, g.metric, g.limit)
		}
	}
	bad := map[string]string{
		"p95>+10%":         "unknown metric",
		"p99>+10":          "want METRIC>+X%",
		"p99":              "want METRIC>+X%",
		"p99>=10%":         "want METRIC>+X%",
		"p99<-10%":         "gets worse by going up",
		"p99>-10%":         "gets worse by going up",
		"throughput>+5%":   "gets worse by going down",
		"throughput<+5%":   "gets worse by going down",
		"throughput<-100%": "cannot fall",
		"errors>+200%":     "100 percentage points",
		"":                 "want METRIC>+X%",
	}
	for text, want := range bad {
		_, err := ParseRule(text)
		if !isUsage(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseRule(%q) = %v, want a one-line usage error mentioning %q", text, err, want)
		}
	}
}

// The JSON field names are an interface: a NaN is null, and every field a
// machine reads is there.
func TestCompareJSONFields(t *testing.T) {
	r := &Report{Base: Side{Dir: "a", Kind: KindLoad}, New: Side{Dir: "b", Kind: KindLoad}, Level: 0.95, FailIf: []RuleResult{},
		Comparisons: []Comparison{{Method: MethodBlock, Metrics: []MetricResult{{Metric: "p99", Unit: "ms", Base: 1, New: 2, Change: "ratio",
			Estimate: 2, Lo: Num(math.NaN()), Hi: Num(math.Inf(1)), Verdict: VerdictUnknown}}}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"base":{"dir":"a","kind":"load"}`, `"level":0.95`, `"comparisons":[`, `"step":""`, `"variant":""`,
		`"method":"block-bootstrap"`, `"method_detail":`, `"base_runs":0`, `"new_requests":0`, `"metrics":[`, `"metric":"p99"`,
		`"unit":"ms"`, `"change":"ratio"`, `"estimate":2`, `"ci_lo":null`, `"ci_hi":null`, `"base_n":0`, `"n_unit":""`,
		`"verdict":"unknown (no interval)"`, `"fail_if":[]`, `"failed":false`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s:\n%s", key, data)
		}
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || !math.IsNaN(float64(back.Comparisons[0].Metrics[0].Lo)) {
		t.Errorf("round trip: %v, %+v", err, back)
	}
}

// A run with its A/A twin is a noise model: one pair per step and
// repetition, pooled, leaving out a pair whose unit failed the noise
// audit; a run without a twin, or a single load, is none.
func TestCompareNoiseFromTwin(t *testing.T) {
	run, err := results.Create(t.TempDir(), "svc", "quick", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteProvenance(results.Provenance{Study: "svc", Profile: "quick"}); err != nil {
		t.Fatal(err)
	}
	s := &study.Study{Name: "svc", Repetitions: 2, AA: "go", Variants: []study.Axis{{Name: "impl", Values: []string{"go"}}},
		Load: study.Plan{Service: "api", Steps: []*study.Step{{Name: "steady"}, {Name: "burst"}}}}
	if err := run.WriteStudy(nil, s); err != nil {
		t.Fatal(err)
	}
	seed := uint64(0)
	for rep := 1; rep <= 2; rep++ {
		for _, v := range []string{"go", "go@aa"} {
			for _, step := range []string{"steady", "burst"} {
				seed++
				dir := run.StepDir(rep, v, step)
				writeStep(t, dir, load{n: 500, rps: 250, medianMs: 2, scale: 1 + 0.01*float64(seed%3), seed: seed})
				if err := dir.WriteResources(results.StepResources{Method: "proc"}); err != nil {
					t.Fatal(err)
				}
				if err := dir.WriteAudit(results.Audit{OK: !(rep == 2 && v == "go@aa" && step == "burst")}); err != nil {
					t.Fatal(err)
				}
				if err := run.MarkDone(results.UnitKey(rep, v, step)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	n, err := OpenNoise(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind != KindRun || n.Pairs != 3 || len(n.Notes) != 1 || !strings.Contains(n.Notes[0], "1 A/A pair left out") {
		t.Errorf("noise %+v, want 3 pairs and the audited-out one noted", n)
	}
	// Repetition 1's two pairs share its two deployments: the 3 pairs are
	// worth fewer than 3 degrees of freedom when those deployments' luck
	// is the noise, never more (stats.LogSpread).
	for _, sp := range n.Spreads {
		if (sp.Metric == "p50" || sp.Metric == "p99") && (sp.DF < 1 || sp.DF > 3 || !(sp.Sigma > 0) || !(sp.Lo < sp.Sigma && sp.Sigma < sp.Hi)) {
			t.Errorf("%s: spread %+v, want a positive σ on 1 to 3 degrees of freedom", sp.Metric, sp)
		}
	}
	noTwin := writeRunDir(t, []load{{n: 100, rps: 100, medianMs: 1, scale: 1, seed: 1}})
	if _, err := OpenNoise(noTwin); !isUsage(err) || !strings.Contains(err.Error(), "no A/A twin") {
		t.Errorf("a run without a twin: %v", err)
	}
	if _, err := OpenNoise(writeLoadDir(t, load{n: 100, rps: 100, medianMs: 1, scale: 1, seed: 1})); !isUsage(err) || !strings.Contains(err.Error(), "single load") {
		t.Errorf("a single load: %v", err)
	}
}

// The gate's JSON says how it tested: the correction, k, the per-test
// level, and per rule the deciding bound, the method and the runs a side;
// a noise model that no comparison needed is noted.
func TestCompareGateJSON(t *testing.T) {
	sys := calSystem{r: rand.New(rand.NewPCG(3, 4)), offset: 0.03, pool: []float64{0}}
	r, err := Compare(sys.source("base", 3, uniform(1)), sys.source("new", 3, uniform(1.5)), Options{Noise: sys.noise()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(parseRules(t, "p99>+10%", "mean>+10%")); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"gate":{"correction":"bonferroni","alpha":0.05`, `"tests":12`, `"unknown":0`, `"noise":{"dir":"aa","kind":"run","pairs":6`,
		`"notes":["the noise model is not used`, `"bound":1.`, `"method":"runs","base_runs":3,"new_runs":3`, `"breached":true`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s:\n%s", key, data)
		}
	}
	if g := r.Gate; math.Abs(g.TestLevel-(1-0.05/12)) > 1e-12 || !r.Failed {
		t.Errorf("gate %+v, failed %v; want 12 tests at 1 − 0.05/12, failed", g, r.Failed)
	}
}
