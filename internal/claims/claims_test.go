package claims

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/stats"
)

func ptr(x float64) *float64 { return &x }

// runs draws n per-run ratios around truth with log-normal noise sd.
func runs(truth, sd float64, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = truth * math.Exp(sd*r.NormFloat64())
	}
	return out
}

// Verdicts on synthetic runs whose truth is known.
func TestJudgeKnowsItsUncertainty(t *testing.T) {
	slower := Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1.5)}}
	tests := []struct {
		name        string
		claim       Claim
		metric      Metric
		floor       float64
		want        string
		provisional bool
	}{
		{"a true 2× effect with small noise is reproduced", slower, Metric{PerRun: runs(2, 0.03, 5, 1), Ratio: true}, 0.03, Reproduced, false},
		{"no effect is not reproduced", slower, Metric{PerRun: runs(1, 0.03, 5, 2), Ratio: true}, 0.03, NotReproduced, false},
		{"huge noise is inconclusive", slower, Metric{PerRun: runs(1.5, 1, 5, 3), Ratio: true}, 0.03, Inconclusive, false},
		{"one run is provisional", slower, Metric{PerRun: []float64{2}, Ratio: true}, 0.03, Reproduced, true},
		{"two runs are provisional", slower, Metric{PerRun: runs(2, 0.01, 2, 4), Ratio: true}, 0.03, Reproduced, true},
		{"nothing measured", slower, Metric{}, 0.03, NotMeasured, false},
		{"a 3% difference inside a 5% floor is not real",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1)}}, Metric{PerRun: runs(1.03, 0.002, 8, 5), Ratio: true}, 0.05, NotReproduced, false},
		{"the same 3% difference with no floor is real",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1)}}, Metric{PerRun: runs(1.03, 0.002, 8, 5), Ratio: true}, 0, Reproduced, false},
		{"no notable boost holds while the ratio stays within the floor",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(0.9)}}, Metric{PerRun: runs(0.88, 0.002, 8, 6), Ratio: true}, 0.2, Reproduced, false},
		{"a finding of ours holds, never reproduced",
			Claim{ID: "c", Metric: "m", Expect: Expect{Below: ptr(1)}, Ours: true}, Metric{PerRun: runs(0.5, 0.02, 5, 7), Ratio: true}, 0.03, Holds, false},
		{"near with a margin", Claim{ID: "c", Metric: "m", Expect: Expect{Near: ptr(6.25), Margin: 0.2}}, Metric{PerRun: runs(6, 0.02, 5, 8), Ratio: true}, 0.03, Reproduced, false},
		{"a share, not a ratio", Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1.0 / 3)}}, Metric{PerRun: []float64{0.05, 0.06, 0.04}}, 0.03, NotReproduced, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(tt.claim, map[string]Metric{"m": tt.metric}, tt.floor)
			if r.Verdict != tt.want || r.Provisional != tt.provisional {
				t.Fatalf("verdict %q provisional %v (estimate %s, region %s: %s); want %q provisional %v",
					r.Verdict, r.Provisional, r.Measured(), r.Region, r.Why, tt.want, tt.provisional)
			}
		})
	}
}

func TestExplainedOnlyByAMeasuredCause(t *testing.T) {
	c := Claim{ID: "delta", Metric: "share-dial", Expect: Expect{Above: ptr(1.0 / 3)},
		Explain: &Explanation{Text: "connection set-up", Metric: "share-drop", Expect: Expect{Above: ptr(0.1)}}}
	m := map[string]Metric{"share-dial": {PerRun: []float64{0.5, 0.55, 0.52}}, "share-drop": {PerRun: []float64{0.4, 0.42, 0.45}}}
	if r := Judge(c, m, 0.03); r.Verdict != "explained by connection set-up" {
		t.Fatalf("verdict %q: %s", r.Verdict, r.Why)
	}
	m["share-drop"] = Metric{PerRun: []float64{0.4, -0.3, 0.05}} // not measured with confidence
	if r := Judge(c, m, 0.03); r.Verdict != Reproduced {
		t.Fatalf("an unmeasured cause explained it: %q", r.Verdict)
	}
}

func TestClaimsFileErrorsNameFileLineAndField(t *testing.T) {
	src := `figures:
  spring: {bands: [{x: [40, 90], y: [800, 850]}], unit: ms}
claims:
  - id: ok
    text: fine
    metric: m
    expect: {within: [4, 8.5]}
  - id: ok
    text: twice
    metric: m
    expect: {above: 1, below: 2}
  - id: nofig
    text: x
    metric: m
    figure: gin
    expect: {near: 6.25}
`
	_, err := Parse("claims.yaml", []byte(src))
	for _, want := range []string{
		`claims.yaml:8: claims[1].id: "ok" given twice`,
		"claims.yaml:8: claims[1].expect: give exactly one of above, below, within, near",
		`claims.yaml:12: claims[2].figure: no figure "gin"`,
		"claims.yaml:12: claims[2].expect: near needs a margin",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to contain %q", err, want)
		}
	}
	if _, err := Parse("claims.yaml", []byte("claims:\n  - id: a\n    colour: blue\n")); err == nil || !strings.Contains(err.Error(), "line 3: field colour not found") {
		t.Errorf("an unknown field: %v", err)
	}
}

// A t-interval over three runs of a share near 0 reaches below 0; the
// estimate a verdict rests on must not.
func TestSummariseKeepsTheIntervalInRange(t *testing.T) {
	nearZero := []float64{0, 0, 0.003} // mean 0.001, raw interval about −0.0033 to 0.0053
	tests := []struct {
		name   string
		metric Metric
		lo, hi float64
		text   string
	}{
		{"a share: no end below 0", Metric{PerRun: nearZero, Range: &stats.Share}, 0, 0.0053027, "0.001 (95% CI 0–0.0053), n=3"},
		{"a share: no end above 1", Metric{PerRun: []float64{1, 1, 0.997}, Range: &stats.Share}, 0.9946973, 1, "0.999 (95% CI 0.995–1), n=3"},
		{"a share inside its range: unchanged", Metric{PerRun: []float64{0.5, 0.5, 0.503}, Range: &stats.Share}, 0.4966973, 0.5053027, "0.501 (95% CI 0.497–0.505), n=3"},
		{"a difference: unbounded", Metric{PerRun: nearZero}, -0.0033027, 0.0053027, "0.001 (95% CI -0.0033–0.0053), n=3"},
		{"one run: no interval", Metric{PerRun: []float64{0.002}, Range: &stats.Share}, math.NaN(), math.NaN(), "0.002, n=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Summarise(tt.metric)
			if !nearly(e.Lo, tt.lo) || !nearly(e.Hi, tt.hi) || format(e) != tt.text {
				t.Fatalf("got %v to %v, %q; want %v to %v, %q", e.Lo, e.Hi, format(e), tt.lo, tt.hi, tt.text)
			}
		})
	}
}

// Ends clamped onto a region's edge are not past it: verdicts on a share
// stay what its runs can tell.
func TestClampedEndsOnTheEdge(t *testing.T) {
	share := func(xs ...float64) Metric { return Metric{PerRun: xs, Range: &stats.Share} }
	tests := []struct {
		name   string
		expect Expect
		metric Metric
		want   string
	}{
		{"no run lost anything: below 0.001", Expect{Below: ptr(0.001)}, share(0, 0, 0), Reproduced},
		{"no run lost anything: not above 0", Expect{Above: ptr(0)}, share(0, 0, 0), NotReproduced},
		{"one run lost a little: 0 is not excluded", Expect{Above: ptr(0)}, share(0, 0, 0.003), Inconclusive},
		{"a share cannot exceed 1", Expect{Above: ptr(1)}, share(1, 1, 0.997), NotReproduced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(Claim{ID: "c", Metric: "m", Expect: tt.expect}, map[string]Metric{"m": tt.metric}, 0.03)
			if r.Verdict != tt.want {
				t.Fatalf("verdict %q (estimate %s, region %s: %s); want %q", r.Verdict, r.Measured(), r.Region, r.Why, tt.want)
			}
		})
	}
}

func nearly(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) < 1e-6
}
