package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"
)

// withFigures adds made-up figures to summarymetric.All for one test: a
// latency quantile (p75, read from records through the same series as
// p50) and a second throughput (the achieved rate). Nothing else in
// compare learns of them.
func withFigures(t *testing.T) {
	saved := summarymetric.All
	t.Cleanup(func() { summarymetric.All = saved })
	summarymetric.All = append(slices.Clone(saved),
		summarymetric.Descriptor{Name: "p75", Unit: summarymetric.Milliseconds, Worse: summarymetric.Up, Change: summarymetric.Ratio,
			Range: stats.NonNegative, Verdicts: summarymetric.Verdicts{Better: "faster", Worse: "slower"},
			Of: func(s metrics.Summary) float64 { return s.Latency.P75 }, Series: summarymetric.Latencies, Quantile: 0.75},
		summarymetric.Descriptor{Name: "achieved", Unit: summarymetric.RequestsPerSecond, Worse: summarymetric.Down, Change: summarymetric.Ratio,
			Range: stats.NonNegative, Verdicts: summarymetric.Verdicts{Better: "faster", Worse: "slower"},
			Of: func(s metrics.Summary) float64 { return s.AchievedRPS }, Series: summarymetric.Completions})
}

// figureRule writes a rule on a figure by hand, in the direction it gets
// worse, so that the test does not read the syntax from the code under
// test.
func figureRule(d summarymetric.Descriptor, margin string) string {
	if d.Worse == summarymetric.Down {
		return d.Name + "<-" + margin
	}
	return d.Name + ">+" + margin
}

// figureSource is a side of 5 runs of one cell, every figure k times
// worse than at k = 1 (latencies ×k, rates ÷k, the error share up by
// 0.3·(k − 1)), each run 1% off its level.
func figureSource(name string, k float64, seed uint64) *Source {
	r := rand.New(rand.NewPCG(seed, 7))
	c := &Cell{Step: "steady", Variant: "go"}
	for rep := 1; rep <= 5; rep++ {
		j := math.Exp(0.01 * r.NormFloat64())
		lat := metrics.Distribution{P50: 2 * k * j, P75: 3 * k * j, P90: 4 * k * j, P99: 9 * k * j, Mean: 2.5 * k * j}
		share := (0.01 + 0.3*(k-1)) * j
		c.Units = append(c.Units, Unit{Rep: rep, Summary: metrics.Summary{Valid: true, Requests: 10000, Successes: int64(10000 * (1 - share)),
			ThroughputRPS: 500 / k * j, AchievedRPS: 510 / k * j, Latency: lat}})
	}
	return &Source{Dir: name, Kind: KindLoads, Cells: []*Cell{c}}
}

// A figure needs nothing but its descriptor: a rule on every figure,
// made-up ones included, parses (and is refused written the wrong way),
// is breached when NEW is twice as bad, not when it is the same system,
// and every figure is printed with its verdict.
func TestCompareRuleOnEveryFigure(t *testing.T) {
	withFigures(t)
	var rules []Rule
	for _, d := range summarymetric.All {
		rule, err := ParseRule(figureRule(d, "10%"))
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		rules = append(rules, rule)
		wrong := strings.NewReplacer(">+", "<-", "<-", ">+").Replace(rule.Text)
		if _, err := ParseRule(wrong); !isUsage(err) || !strings.Contains(err.Error(), "gets worse by going") {
			t.Errorf("%q: %v, want refused", wrong, err)
		}
	}
	base := figureSource("base", 1, 1)
	for _, tt := range []struct {
		name     string
		k        float64
		breached bool
	}{{"twice as bad", 2, true}, {"the same system", 1, false}} {
		r, err := Compare(base, figureSource("new", tt.k, 2), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Apply(rules); err != nil {
			t.Fatal(err)
		}
		if r.Gate.Tests != len(summarymetric.All) || len(r.FailIf) != len(summarymetric.All) {
			t.Fatalf("%s: %d tests, want one per figure", tt.name, r.Gate.Tests)
		}
		for _, res := range r.FailIf {
			if res.Breached != tt.breached || res.Unknown {
				t.Errorf("%s: %s breached %v (unknown %v), want %v", tt.name, res.Rule, res.Breached, res.Unknown, tt.breached)
			}
		}
		c := &r.Comparisons[0]
		var text strings.Builder
		if err := WriteText(&text, r); err != nil {
			t.Fatal(err)
		}
		for _, d := range summarymetric.All {
			m := c.Metric(d.Name)
			want := d.Verdicts.Worse
			if !tt.breached {
				want = VerdictSame
			}
			if m == nil || m.Verdict != want || m.Unit != d.Unit || m.Change != d.Change || m.NUnit != "runs" {
				t.Errorf("%s: %s: %+v, want verdict %q", tt.name, d.Name, m, want)
				continue
			}
			if row := fmt.Sprintf("\n   %s ", metricLabel(*m)); !strings.Contains(text.String(), row) {
				t.Errorf("%s: the text has no row %q:\n%s", tt.name, row, text.String())
			}
		}
		if tt.breached && len(r.Breaches()) != len(rules) {
			t.Errorf("%s: breaches %q, want one per figure", tt.name, r.Breaches())
		}
	}
}

// One load a side: a made-up latency quantile is computed from the records
// and resampled with the others, and comes out as slower as they do.
func TestCompareBlockOnNewFigure(t *testing.T) {
	withFigures(t)
	base := writeLoadDir(t, load{n: 4000, rps: 500, medianMs: 2, scale: 1, seed: 1})
	new := writeLoadDir(t, load{n: 4000, rps: 500, medianMs: 2, scale: 1.5, seed: 2})
	r := compareDirs(t, base, new)
	c := &r.Comparisons[0]
	p75, p50 := c.Metric("p75"), c.Metric("p50")
	if c.Method != MethodBlock || p75 == nil || p75.Verdict != VerdictSlower || p75.NUnit != "requests" || p75.BaseN != 4000 ||
		math.Abs(float64(p75.Estimate)-1.5) > 0.2 || !(p75.Base > p50.Base) {
		t.Errorf("p75 %+v (p50 %+v), want slower, about 1.5, from 4000 requests a side", p75, p50)
	}
	if a := c.Metric("achieved"); a == nil || a.Verdict != VerdictSame || a.NUnit != "intervals" {
		t.Errorf("achieved %+v, want the same from completions per interval", a)
	}
}
