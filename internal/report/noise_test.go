package report

import (
	"math"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// aaRun is a study of three steps, two repetitions, with its A/A twin:
// the twin's figure over the base's is p50Ratio(step, rep) in median
// latency and p99Ratio in p99; the units of step s3 fail their audit
// when failS3.
func aaRun(t *testing.T, p50Ratio, p99Ratio func(step string, rep int) float64, failS3 bool) *analysis.Dataset {
	t.Helper()
	s := &study.Study{Name: "x", Repetitions: 2, AA: "a",
		Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Load:     study.Plan{Steps: []*study.Step{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}}}}
	base := s.Matrix()[0]
	twin, ok := s.Twin()
	if !ok {
		t.Fatal("no twin")
	}
	var units []*analysis.Unit
	for rep := 1; rep <= 2; rep++ {
		for _, step := range []string{"s1", "s2", "s3"} {
			var audit *results.Audit
			if failS3 && step == "s3" {
				audit = &results.Audit{OK: false, Reasons: []string{"processes outside the run used 56.0% of the machine's CPU"}, ForeignShare: 0.56}
			}
			units = append(units,
				&analysis.Unit{Rep: rep, Variant: base, Step: step, Audit: audit, Summary: metrics.Summary{Latency: metrics.Distribution{P50: 2, P99: 4}, ThroughputRPS: 100}},
				&analysis.Unit{Rep: rep, Variant: twin, Step: step, Audit: audit, Summary: metrics.Summary{Latency: metrics.Distribution{P50: 2 * p50Ratio(step, rep), P99: 4 * p99Ratio(step, rep)}, ThroughputRPS: 100}})
		}
	}
	return analysis.NewDataset(s, units)
}

// The noise model is, per kind of figure, the pooled A/A spread of the
// audited units only: known exactly on synthetic data. The floor it
// replaces was one number, the p50 difference of every unit, audited or
// not, applied to every kind (issue 20, item 4).
func TestNoiseModelPerKindFromAuditedUnits(t *testing.T) {
	// log ratios ±0.1 in p50 and ±0.3 in p99, alternating by repetition
	// (so the A/A ratio centres on 1); s3 came apart by 5× but failed its
	// audit.
	sign := func(rep int) float64 { return float64(2*rep - 3) }
	p50 := func(step string, rep int) float64 {
		if step == "s3" {
			return 5
		}
		return math.Exp(0.1 * sign(rep))
	}
	p99 := func(step string, rep int) float64 { return math.Exp(0.3 * sign(rep)) }
	n := noiseModel(aaRun(t, p50, p99, true))
	// σ̂² = Σ d² / 2n = d²/2 with every |d| alike. The two steps of a
	// repetition came apart alike, all of it their deployments' luck: the
	// 4 pairs are worth 2 degrees of freedom, one a repetition. (Throughput
	// never came apart: no luck to share, and every pair counts.)
	for kind, want := range map[claims.Kind]struct {
		sigma float64
		df    int
	}{claims.Latency: {0.1 / math.Sqrt2, 2}, claims.Tail: {0.3 / math.Sqrt2, 2}, claims.Throughput: {0, 4}} {
		s, ok := n.model[kind]
		if !ok || s.DF != want.df || math.Abs(s.Sigma-want.sigma) > 1e-9 {
			t.Errorf("%s: spread %+v, want σ̂ %.4f with %d degrees of freedom from the 4 audited pairs", kind, s, want.sigma, want.df)
		}
	}
	if text := strings.Join(n.section.Text, " "); strings.Contains(text, "BIASED") || !strings.Contains(text, "A/A pairs left out because a side failed its noise audit: 2 ") {
		t.Errorf("an unbiased A/A pair read as biased, or s3's two pairs not said to be left out: %s", text)
	}
	if len(n.section.Tables) != 2 || len(n.section.Tables[1].Rows) != 3 {
		t.Fatalf("A/A tables %+v", n.section.Tables)
	}

	// A twin 10% slower in every step and repetition: the design is
	// biased, and the report says so.
	slower := func(string, int) float64 { return 1.1 }
	n = noiseModel(aaRun(t, slower, slower, false))
	if text := strings.Join(n.section.Text, " "); !strings.Contains(text, "THE DESIGN IS BIASED") || !strings.Contains(text, "median latency (p50) (the second deployment at 1.100×") {
		t.Errorf("a biased A/A pair not called biased: %s", text)
	}

	ds := aaRun(t, p50, p99, false)
	ds.Study.AA = ""
	if n := noiseModel(ds); len(n.model) != 0 || !strings.Contains(n.section.Text[0], "no decisive verdict") {
		t.Fatalf("a run without a twin: %+v", n)
	}
}
