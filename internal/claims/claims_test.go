package claims

import (
	"fmt"
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

// aa is a noise model as an A/A twin of 3% run-to-run spread over 20
// pairs gives it.
var aa = Noise{Latency: {Sigma: 0.03, Lo: 0.023, Hi: 0.044, DF: 20}}

// Verdicts on synthetic runs whose truth is known. The region is the
// claim's own, whatever the noise: the cases "3% inside a 5% floor",
// "no notable boost within the floor" and "a near-margin widened to the
// floor" asserted the opposite verdicts before the floor went (issue 20,
// items 2 and 3).
func TestJudgeKnowsItsUncertainty(t *testing.T) {
	slower := Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1.5)}}
	latency := func(xs []float64) Metric { return Metric{PerRun: xs, Ratio: true, Kind: Latency} }
	tests := []struct {
		name        string
		claim       Claim
		metric      Metric
		noise       Noise
		want        string
		provisional bool
	}{
		{"a true 2× effect with small noise is reproduced", slower, latency(runs(2, 0.03, 5, 1)), aa, Reproduced, false},
		{"no effect is not reproduced", slower, latency(runs(1, 0.03, 5, 2)), aa, NotReproduced, false},
		{"huge noise is inconclusive", slower, latency(runs(1.5, 1, 5, 3)), aa, Inconclusive, false},
		{"one run without a noise model decides nothing", slower, latency([]float64{2}), nil, Inconclusive, true},
		{"one run of a kind the model lacks decides nothing", slower, Metric{PerRun: []float64{2}, Ratio: true, Kind: Throughput}, aa, Inconclusive, true},
		{"one run far beyond the A/A spread is provisionally reproduced", slower, latency([]float64{2}), aa, Reproduced, true},
		{"one run within the A/A spread of the edge is inconclusive", slower, latency([]float64{1.55}), aa, Inconclusive, true},
		{"two runs are provisional", slower, latency(runs(2, 0.01, 2, 4)), aa, Reproduced, true},
		{"nothing measured", slower, Metric{}, aa, NotMeasured, false},
		{"a 3% difference measured tightly is real, whatever the noise",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1)}}, latency(runs(1.03, 0.002, 8, 5)), Noise{Latency: {Sigma: 0.05, DF: 10}}, Reproduced, false},
		{"a 12% boost is a notable boost: no edge moves to hide it",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(0.9)}}, latency(runs(0.88, 0.002, 8, 6)), Noise{Latency: {Sigma: 0.2, DF: 10}}, NotReproduced, false},
		{"fiber 20% faster is not 'no notable boost' on a noisy machine",
			Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(0.9)}}, latency(runs(0.795, 0.01, 8, 9)), Noise{Latency: {Sigma: 0.36, DF: 10}}, NotReproduced, false},
		{"800 ms ± 5% is not 945 ms, however noisy the machine",
			Claim{ID: "c", Metric: "m", Expect: Expect{Near: ptr(800), Margin: 0.05}}, Metric{PerRun: []float64{940, 945, 950}, Kind: Latency, Unit: "ms"}, Noise{Latency: {Sigma: 0.237, DF: 10}}, NotReproduced, false},
		{"a finding of ours holds, never reproduced",
			Claim{ID: "c", Metric: "m", Expect: Expect{Below: ptr(1)}, Ours: true}, latency(runs(0.5, 0.02, 5, 7)), aa, Holds, false},
		{"near with a margin", Claim{ID: "c", Metric: "m", Expect: Expect{Near: ptr(6.25), Margin: 0.2}}, latency(runs(6, 0.02, 5, 8)), aa, Reproduced, false},
		{"a share, not a ratio", Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1.0 / 3)}}, Metric{PerRun: []float64{0.05, 0.06, 0.04}}, aa, NotReproduced, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(tt.claim, map[string]Metric{"m": tt.metric}, tt.noise)
			if r.Verdict != tt.want || r.Provisional != tt.provisional {
				t.Fatalf("verdict %q provisional %v (estimate %s, region %s: %s); want %q provisional %v",
					r.Verdict, r.Provisional, r.Measured(), r.Region, r.Why, tt.want, tt.provisional)
			}
			if r.Region != regionText(tt.claim.Expect.region()) {
				t.Fatalf("region %q: the claim's edge moved from %q", r.Region, regionText(tt.claim.Expect.region()))
			}
		})
	}
}

// One run's interval is the value × exp(±t·σ̂·√d), d the deployments a
// value divides, and the verdict says where it came from.
func TestOneRunIntervalFromTheA_ASpread(t *testing.T) {
	noise := Noise{Latency: {Sigma: 0.1, DF: 12}}
	t12 := 2.178812829667228 // t(0.975, 12)
	tests := []struct {
		name   string
		metric Metric
		half   float64
	}{
		{"a ratio of two deployments", Metric{PerRun: []float64{2}, Ratio: true, Kind: Latency}, t12 * 0.1 * math.Sqrt2},
		{"one system's figure", Metric{PerRun: []float64{2}, Kind: Latency}, t12 * 0.1},
		{"a ratio within one deployment", Metric{PerRun: []float64{2}, Ratio: true, Kind: Latency, Deployments: 1}, t12 * 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1)}}, map[string]Metric{"m": tt.metric}, noise)
			if !nearly(r.Estimate.Lo, 2*math.Exp(-tt.half)) || !nearly(r.Estimate.Hi, 2*math.Exp(tt.half)) {
				t.Fatalf("interval %v–%v, want 2×exp(±%v)", r.Estimate.Lo, r.Estimate.Hi, tt.half)
			}
			if !strings.Contains(r.VerdictText(), "provisional: interval from the A/A spread, not from repetitions") {
				t.Fatalf("verdict %q does not say where its interval came from", r.VerdictText())
			}
		})
	}
}

// "X is fastest everywhere" is a conjunction of pairwise ratios: it holds
// when every interval lies on the claimed side, fails when any lies
// wholly on the other, and says how many comparisons it made.
func TestConjunctionOfPairwiseComparisons(t *testing.T) {
	fastest := Claim{ID: "c", Metric: "m", Expect: Expect{Below: ptr(1)}}
	parts := func(truths ...float64) []Part {
		var out []Part
		for i, x := range truths {
			out = append(out, Part{Label: string(rune('a' + i)), PerRun: runs(x, 0.02, 5, uint64(10+i))})
		}
		return out
	}
	tests := []struct {
		name  string
		parts []Part
		want  string
		shown string
	}{
		{"faster than each in every step", parts(0.8, 0.7, 0.85, 0.75), Reproduced, "c"},
		{"slower than one somewhere", parts(0.8, 1.2, 0.85, 0.75), NotReproduced, "b"},
		{"level with one", parts(0.8, 0.7, 1.0, 0.75), Inconclusive, "c"},
		{"one comparison not measured", append(parts(0.8, 0.7), Part{Label: "z"}), Inconclusive, "a"},
		{"none measured", []Part{{Label: "y"}, {Label: "z"}}, NotMeasured, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(fastest, map[string]Metric{"m": {All: tt.parts, Ratio: true, Kind: Latency}}, aa)
			if r.Verdict != tt.want || r.Shown != tt.shown {
				t.Fatalf("verdict %q shown %q (%s: %s); want %q shown %q", r.Verdict, r.Shown, r.Measured(), r.Why, tt.want, tt.shown)
			}
			if tt.want == NotMeasured {
				return
			}
			k := len(tt.parts)
			if !strings.Contains(r.VerdictText(), fmt.Sprintf("over %d pairwise comparisons", k)) || !nearly(r.Estimate.Level, 1-0.05/float64(k)) {
				t.Fatalf("verdict %q, level %v: want the multiplicity %d and a Bonferroni level", r.VerdictText(), r.Estimate.Level, k)
			}
		})
	}
}

func TestExplainedOnlyByAMeasuredCause(t *testing.T) {
	c := Claim{ID: "delta", Metric: "share-dial", Expect: Expect{Above: ptr(1.0 / 3)},
		Explain: &Explanation{Text: "connection set-up", Metric: "share-drop", Expect: Expect{Above: ptr(0.1)}}}
	m := map[string]Metric{"share-dial": {PerRun: []float64{0.5, 0.55, 0.52}}, "share-drop": {PerRun: []float64{0.4, 0.42, 0.45}}}
	if r := Judge(c, m, nil); r.Verdict != "explained by connection set-up" {
		t.Fatalf("verdict %q: %s", r.Verdict, r.Why)
	}
	m["share-drop"] = Metric{PerRun: []float64{0.4, -0.3, 0.05}} // not measured with confidence
	if r := Judge(c, m, nil); r.Verdict != Reproduced {
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
  - id: narrow
    text: y
    metric: m
    target_width: -0.1
    expect: {above: 1}
`
	_, err := Parse("claims.yaml", []byte(src))
	for _, want := range []string{
		`claims.yaml:8: claims[1].id: "ok" given twice`,
		"claims.yaml:8: claims[1].expect: give exactly one of above, below, within, near",
		`claims.yaml:12: claims[2].figure: no figure "gin"`,
		"claims.yaml:12: claims[2].expect: near needs a margin",
		"claims.yaml:17: claims[3].target_width: -0.1: want a share of the value, such as 0.2 for 20%",
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
			e := Summarise(tt.metric, nil, Level)
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
			r := Judge(Claim{ID: "c", Metric: "m", Expect: tt.expect}, map[string]Metric{"m": tt.metric}, nil)
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
