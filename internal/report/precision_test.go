package report

import (
	"maps"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/stats"
	"github.com/msbench/msbench/internal/study"
)

// t2 is the two-sided critical value of Student's t with one degree of
// freedom at level: with two values a side the width has a closed form.
func t2(level float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 1}.Quantile(1 - (1-level)/2)
}

// comparedRun is a study without claims, variants a (the baseline) and b
// in one step: b's p50 over a's is p50[rep] in each repetition, every
// other figure the same in both.
func comparedRun(p50 []float64) *analysis.Dataset {
	st := &study.Study{Name: "precision-compared", Repetitions: len(p50), Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Load: study.Plan{Steps: []*study.Step{{Name: "s"}}}}
	var units []*analysis.Unit
	for i, ratio := range p50 {
		for _, v := range st.Runs() {
			p := 2.0
			if v.Get("v") == "b" {
				p *= ratio
			}
			units = append(units, &analysis.Unit{Rep: i + 1, Variant: v, Step: "s", Audit: &results.Audit{OK: true},
				Summary:   metrics.Summary{Latency: metrics.Distribution{P50: p, P99: 8}, ThroughputRPS: 500, Requests: 5000, Successes: 5000},
				Resources: results.StepResources{Services: []results.ServiceUsage{{CPUUserS: 2}}}})
		}
	}
	return analysis.NewDataset(st, units)
}

// A study without claims is as precise as its comparison's cells, each
// at the Bonferroni level its verdict reads (four cells here: 1 − 0.05/4).
func TestPrecisionOfTheComparison(t *testing.T) {
	level := 1 - 0.05/4
	for _, c := range []struct {
		name       string
		p50        []float64
		target     float64
		wider      int
		widest     float64 // NaN: not checked beyond being unbounded
		what       string
		intervals  int
		narrowWant bool
	}{
		{"identical in every repetition", []float64{1.1, 1.1, 1.1, 1.1, 1.1}, 0.1, 0, 0, "step s", 4, true},
		// Two repetitions: hi/lo = exp(t·|log(r1/r2)|).
		{"p50 apart by 1%", []float64{1, 1.01}, 0.1, 1, math.Exp(t2(level)*math.Log(1.01)) - 1, "step s, b / a, p50", 4, false},
		{"a generous target", []float64{1, 1.01}, 0.7, 0, math.Exp(t2(level)*math.Log(1.01)) - 1, "p50", 4, true},
		{"one repetition, no A/A twin", []float64{1.2}, 0.1, 4, math.Inf(1), "no interval, one repetition and no A/A noise model", 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Measure(comparedRun(c.p50), c.target, Options{})
			if p.Intervals != c.intervals || p.Wider != c.wider || p.Narrow() != c.narrowWant || !strings.Contains(p.What, c.what) {
				t.Errorf("%+v (%s): want %d intervals, %d wider, narrow %v, the widest naming %q", p, p, c.intervals, c.wider, c.narrowWant, c.what)
			}
			if math.Abs(p.Widest-c.widest) > 1e-9 && !(math.IsInf(c.widest, 1) && math.IsInf(p.Widest, 1)) {
				t.Errorf("widest %g, want %g", p.Widest, c.widest)
			}
		})
	}
}

// measuredMetrics is an analysis that measured the metrics given, whatever
// the run, and "audited", one value per unit of the run: none when every
// unit failed its audit and the claims are judged on those that passed.
type measuredMetrics map[string]claims.Metric

func (f measuredMetrics) Needs() study.Needs {
	n := study.Needs{Metrics: []string{"audited"}}
	for id := range f {
		n.Metrics = append(n.Metrics, id)
	}
	return n
}

func (f measuredMetrics) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	m := maps.Clone(map[string]claims.Metric(f))
	var audited claims.Metric
	for _, u := range ds.Units("a", "s") {
		audited.PerRun = append(audited.PerRun, float64(u.Rep))
	}
	m["audited"] = audited
	return analysis.Result{Metrics: m}, nil
}

// A study with claims is as precise as its claims' intervals: a ratio's
// width is hi/lo − 1, another value's (hi − lo) over the larger of its
// estimate and the claim's smallest edge; a claim without an interval is
// never narrow enough, and one the run's steps do not measure is left out.
func TestPrecisionOfTheClaims(t *testing.T) {
	ptr := func(x float64) *float64 { return &x }
	t95 := t2(0.95)
	metrics := measuredMetrics{
		"steady":  {PerRun: []float64{1.3, 1.3}, Ratio: true},
		"ratio":   {PerRun: []float64{1.3, 1.31}, Ratio: true},
		"near":    {PerRun: []float64{8, 8.01}},
		"spread":  {PerRun: []float64{0.1, 0.2}},
		"zero":    {PerRun: []float64{0, 0}, Range: &stats.Share},
		"one-run": {PerRun: []float64{2}},
		"parts":   {Ratio: true, All: []claims.Part{{Label: "x/y", PerRun: []float64{0.5, 0.5}}, {Label: "x/z", PerRun: []float64{0.5, 0.51}}}},
	}
	claim := func(id, metric string, e claims.Expect) claims.Claim {
		return claims.Claim{ID: id, Text: id, Metric: metric, Expect: e}
	}
	above1 := claims.Expect{Above: ptr(1)}
	ratioWidth := t95 * math.Log(1.31/1.3)
	for _, c := range []struct {
		name      string
		claims    []claims.Claim
		intervals int
		wider     int
		widest    float64
		what      string // in the widest's name
		says      string // in the precision in words
	}{
		{"a steady ratio", []claims.Claim{claim("s", "steady", above1)}, 1, 0, 0, "claim s", "every one of the 1 intervals"},
		{"a ratio over two runs", []claims.Claim{claim("r", "ratio", above1)}, 1, 1, math.Exp(ratioWidth) - 1, "claim r", "1 of the 1 intervals the verdicts read are wider than 10.0%"},
		// (hi − lo) = t·|x1 − x2| over the estimate, 8.005, larger than the edge 4.
		{"a value over its estimate", []claims.Claim{claim("n", "near", claims.Expect{Within: []float64{4, 16}})}, 1, 0, t95 * 0.01 / 8.005, "claim n", ""},
		// Over the edge 1, larger than the estimate 0.15.
		{"a value over the claim's edge", []claims.Claim{claim("d", "spread", claims.Expect{Within: []float64{-1, 1}})}, 1, 1, t95 * 0.1 / 1, "claim d", ""},
		{"zero every time", []claims.Claim{claim("z", "zero", claims.Expect{Below: ptr(0.001)})}, 1, 0, 0, "claim z", ""},
		{"one run, no noise model", []claims.Claim{claim("o", "one-run", above1)}, 1, 1, math.Inf(1), "claim o: no interval, one run and no A/A noise model", "the widest unbounded"},
		{"every step it reads failed its audit", []claims.Claim{claim("f", "audited", above1)}, 1, 1, math.Inf(1), "claim f: no interval, every step it reads failed the noise audit", ""},
		{"not measured by the run's steps", []claims.Claim{claim("m", "absent", above1), claim("s", "steady", above1)}, 1, 0, 0, "claim s", "left out, as this run's steps do not measure them: m"},
		// Each part at 1 − 0.05/2, as the verdict reads it.
		{"every part of a conjunction", []claims.Claim{claim("p", "parts", claims.Expect{Below: ptr(1)})}, 2, 1, math.Exp(t2(1-0.05/2)*math.Log(0.51/0.5)) - 1, "claim p, x/z", ""},
		// Its own target, wider than the run's 10%: narrow enough.
		{"a claim's own target", []claims.Claim{{ID: "w", Text: "w", Metric: "ratio", Expect: above1, TargetWidth: 0.5}}, 1, 0, math.Exp(ratioWidth) - 1, "claim w", "every one of the 1 intervals"},
		// And a narrower one than the run's.
		{"a claim's own narrow target", []claims.Claim{{ID: "t", Text: "t", Metric: "near", Expect: claims.Expect{Within: []float64{4, 16}}, TargetWidth: 0.0001}}, 1, 1, t95 * 0.01 / 8.005, "claim t", "1 of the 1 intervals"},
		{"the widest of several", []claims.Claim{claim("s", "steady", above1), claim("r", "ratio", above1), claim("n", "near", claims.Expect{Within: []float64{4, 16}})}, 3, 1, math.Exp(ratioWidth) - 1, "claim r", "1 of the 3 intervals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "precision-claims-" + strings.ReplaceAll(c.name, " ", "-")
			analysis.Register(name, metrics)
			st := &study.Study{Name: name, Repetitions: 2, Variants: []study.Axis{{Name: "v", Values: []string{"a"}}}, Load: study.Plan{Steps: []*study.Step{{Name: "s"}}}}
			var units []*analysis.Unit
			for rep := 1; rep <= 2; rep++ {
				units = append(units, &analysis.Unit{Rep: rep, Variant: st.Runs()[0], Step: "s", Audit: &results.Audit{Reasons: []string{"the hypervisor stole 30% of the CPU time"}}})
			}
			ds := analysis.NewDataset(st, units)
			ds.Claims = &claims.File{Claims: c.claims}
			p := Measure(ds, 0.1, Options{})
			if p.Intervals != c.intervals || p.Wider != c.wider || p.Narrow() != (c.wider == 0) || !strings.Contains(p.What, c.what) || !strings.Contains(p.String(), c.says) {
				t.Errorf("%+v (%s): want %d intervals, %d wider, the widest naming %q, saying %q", p, p, c.intervals, c.wider, c.what, c.says)
			}
			if math.Abs(p.Widest-c.widest) > 1e-9 && !(math.IsInf(c.widest, 1) && math.IsInf(p.Widest, 1)) {
				t.Errorf("widest %g, want %g", p.Widest, c.widest)
			}
		})
	}
}

// A run that added repetitions until it was precise enough says why it
// stopped, beside its provenance and its claims.
func TestReportSaysWhyTheRunStopped(t *testing.T) {
	const why = "every one of the 3 intervals the verdicts read is within 10.0%"
	ds := analysis.NewDataset(&study.Study{Name: "stopped", Repetitions: 7}, nil)
	ds.Prov.Stopped = why
	ds.Claims = &claims.File{}
	for _, sec := range []analysis.Section{provenanceSection(ds), claimsSection(ds, nil, nil)} {
		md := string(renderMarkdown(ds, []analysis.Section{sec}))
		if !strings.Contains(md, "went on adding repetitions while an interval its verdicts read was wider than asked") || !strings.Contains(md, "stopped after 7: "+why) {
			t.Errorf("section %s does not say why the run stopped:\n%s", sec.Title, md)
		}
	}
}

// A run on a cluster says which: its version, nodes, what each service was
// granted, and every image by digest.
func TestReportSaysWhichCluster(t *testing.T) {
	ds := analysis.NewDataset(&study.Study{Name: "on-a-cluster", Repetitions: 1}, nil)
	ds.Prov.Cluster = &results.Cluster{
		ServerVersion: "v1.30.14",
		Nodes:         []results.ClusterNode{{Name: "n1", CPUs: 2, AllocatableCPUs: 2, MemoryBytes: 8 << 30, ContainerRuntime: "containerd://1.6.20", Zone: "eu-1a"}},
		Namespace:     "msbench-x-1",
		Generators:    2,
		Images:        map[string]string{"generator": "msbench.local/msbench-x-1/msbench-generator:19eb8dafe4cd"},
		Granted:       map[string]string{"gateway": "QoS Guaranteed (1 CPU requested and limited)"},
	}
	md := string(renderMarkdown(ds, []analysis.Section{provenanceSection(ds)}))
	for _, want := range []string{"v1.30.14", "node n1", "2 CPUs (2 allocatable), 8.0 GiB, containerd://1.6.20", "eu-1a", "msbench-x-1", "| generator pods | 2 |",
		"granted gateway | QoS Guaranteed (1 CPU requested and limited)", "image generator | msbench.local/msbench-x-1/msbench-generator:19eb8dafe4cd"} {
		if !strings.Contains(md, want) {
			t.Errorf("the provenance does not say %q:\n%s", want, md)
		}
	}
	ds.Prov.Cluster = nil
	if md := string(renderMarkdown(ds, []analysis.Section{provenanceSection(ds)})); strings.Contains(md, "Kubernetes") {
		t.Errorf("a run on this machine names a cluster:\n%s", md)
	}
}
