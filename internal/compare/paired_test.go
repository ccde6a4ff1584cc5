package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/metrics"
)

// pairedRun is one run directory as msbench ab makes it: in every
// repetition BASE and NEW deployed side by side, calCells steps each. A
// repetition's machine (its drift, σ drift of the log) moves both sides
// alike; each deployment adds its own offset and within-run error
// (calSystem). NEW's true p99 is BASE's × truth.
func (s calSystem) pairedRun(n int, drift, truth float64) *Source {
	src := &Source{Dir: "ab-run", Kind: KindRun}
	for i := range calCells {
		b := &Cell{Step: fmt.Sprintf("step-%d", i), Variant: "base-go"}
		nw := &Cell{Step: b.Step, Variant: "new-go"}
		for rep := 1; rep <= n; rep++ {
			machine := math.Exp(drift * s.r.NormFloat64())
			level := float64(10+i) * machine
			b.Units = append(b.Units, Unit{Rep: rep, Summary: s.run(level)})
			nw.Units = append(nw.Units, Unit{Rep: rep, Summary: s.run(level * truth)})
		}
		src.Cells = append(src.Cells, b, nw)
	}
	return src
}

var goPair = []Pair{{Label: "go", Base: "base-go", New: "new-go"}}

// TestPairedCalibration: the gate over paired repetitions keeps its
// promise (identical builds fail at most 5% of the time over all cells),
// its intervals cover the truth, it catches a real regression, and under
// a drifting machine it is narrower than comparing the same runs unpaired,
// which is what measuring both sides in one run buys.
func TestPairedCalibration(t *testing.T) {
	rule, err := ParseRule("p99>+10%")
	if err != nil {
		t.Fatal(err)
	}
	const trials, fewer = 1000, 300
	pool := withinPool(0.5)
	for _, drift := range []float64{0, 0.3} {
		for _, n := range []int{3, 5} {
			sys := calSystem{r: rand.New(rand.NewPCG(uint64(drift*10)+1, uint64(n))), offset: 0.03, pool: pool}
			gate := func(trials int, truth float64) (failed, covered, intervals int, pairedWidth, unpairedWidth float64) {
				for range trials {
					run := sys.pairedRun(n, drift, truth)
					r, err := Paired(run, goPair, "base", "new", Options{})
					if err != nil {
						t.Fatal(err)
					}
					if err := r.Apply([]Rule{rule}); err != nil {
						t.Fatal(err)
					}
					if r.Failed {
						failed++
					}
					for _, c := range r.Comparisons {
						m := c.Metric("p99")
						intervals++
						if float64(m.Lo) <= truth && truth <= float64(m.Hi) {
							covered++
						}
						pairedWidth += math.Log(float64(m.Hi / m.Lo))
					}
					// The same units as two independent sides.
					base, next := &Source{Dir: "b", Kind: KindRun}, &Source{Dir: "n", Kind: KindRun}
					for i := 0; i < len(run.Cells); i += 2 {
						b, nw := *run.Cells[i], *run.Cells[i+1]
						b.Variant, nw.Variant = "go", "go"
						base.Cells, next.Cells = append(base.Cells, &b), append(next.Cells, &nw)
					}
					u, err := Compare(base, next, Options{})
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range u.Comparisons {
						m := c.Metric("p99")
						unpairedWidth += math.Log(float64(m.Hi / m.Lo))
					}
				}
				return
			}
			aaFailed, covered, intervals, pw, uw := gate(trials, 1)
			edgeFailed, _, _, _, _ := gate(fewer, 1.1)
			powerFailed, _, _, _, _ := gate(fewer, 1.5)
			cov := float64(covered) / float64(intervals)
			t.Logf("drift %2.0f%%, %d repetitions: A/A gate failed %4.1f%%, intervals covered %5.2f%%, mean log-width paired %.3f vs unpaired %.3f; on the limit failed %4.1f%%; 1.5× failed %5.1f%%",
				100*drift, n, 100*float64(aaFailed)/trials, 100*cov, pw/float64(intervals), uw/float64(intervals), 100*float64(edgeFailed)/fewer, 100*float64(powerFailed)/fewer)
			if fa := float64(aaFailed) / trials; fa > 0.05 {
				t.Errorf("drift %.0f%%, n %d: identical builds fail p99>+10%% in %.1f%% of %d-cell comparisons, want at most 5%%", 100*drift, n, 100*fa, calCells)
			}
			if cov < 0.93 || cov > 0.97 {
				t.Errorf("drift %.0f%%, n %d: the 95%% interval covers the truth in %.2f%%, want 93–97%%", 100*drift, n, 100*cov)
			}
			if p := float64(powerFailed) / fewer; n == 5 && p < 0.9 {
				t.Errorf("drift %.0f%%, n 5: a 50%% regression fails the gate in only %.1f%%", 100*drift, 100*p)
			}
			if drift > 0 && pw > uw/2 {
				t.Errorf("drift %.0f%%, n %d: paired intervals (mean log-width %.3f) should be far narrower than unpaired (%.3f) when the machine drifts", 100*drift, n, pw/float64(intervals), uw/float64(intervals))
			}
		}
	}
}

func TestPairedMatchesRepetitions(t *testing.T) {
	unit := func(rep int, p50 float64) Unit {
		return Unit{Rep: rep, Summary: metrics.Summary{Valid: true, Requests: 100, Successes: 100, ThroughputRPS: 10,
			Latency: metrics.Distribution{P50: p50, P90: p50, P99: p50, Mean: p50}}}
	}
	run := &Source{Dir: "ab", Kind: KindRun, Cells: []*Cell{
		// Repetition 2 of NEW failed: its BASE is left out, and the ratios
		// are 2 (rep 1) and 2 (rep 3), not means of unequal sets.
		{Step: "empty", Variant: "base-go", Units: []Unit{unit(1, 1), unit(2, 100), unit(3, 2)}},
		{Step: "empty", Variant: "new-go", Units: []Unit{unit(1, 2), unit(3, 4)}},
		// A step only BASE measured.
		{Step: "math", Variant: "base-go", Units: []Unit{unit(1, 1)}},
	}}
	r, err := Paired(run, goPair, "main (abc123)", "working tree", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Comparisons) != 1 {
		t.Fatalf("comparisons %+v, want only empty's", r.Comparisons)
	}
	c := r.Comparisons[0]
	m := c.Metric("p50")
	if c.Method != MethodPaired || c.BaseRuns != 2 || c.NewRuns != 2 || m.Estimate != 2 || m.Lo != 2 || m.Hi != 2 {
		t.Errorf("empty: %s, %d+%d runs, p50 ×%v (%v–%v); want paired, 2+2, exactly 2", c.Method, c.BaseRuns, c.NewRuns, m.Estimate, m.Lo, m.Hi)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "1 unit measured on one side only") {
		t.Errorf("warnings %q, want the unpaired unit said", c.Warnings)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "step math of go: BASE measured it and NEW did not") {
		t.Errorf("notes %q, want math's one side said", r.Notes)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "BASE  main (abc123)\nNEW   working tree\nboth measured in ab\n") {
		t.Errorf("text does not say what each side was built from:\n%s", text.String())
	}
	// A variant neither side measured (both its deployments failed) is
	// said as such, not as one side's.
	r, err = Paired(run, append(goPair, Pair{Label: "gin", Base: "base-gin", New: "new-gin"}), "b", "n", Options{})
	if err != nil || !slices.Contains(r.Notes, "step empty of gin: neither side measured it") {
		t.Errorf("notes %q, %v: want gin's empty step said unmeasured on both sides", r.Notes, err)
	}
	if _, err := Paired(&Source{Dir: "ab", Kind: KindRun}, goPair, "b", "n", Options{}); err == nil {
		t.Error("a run with nothing to compare gave no error")
	}
}
