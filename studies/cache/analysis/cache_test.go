package cache

import (
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/claims/claimstest"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// A staleness step: reads every 100 ms for 3 s; a mutation to version 2 is
// answered at 1 s. Instance b keeps serving version 1 until 2.5 s.
func TestStalenessCountsOldVersionsAfterAMutation(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1_700_000_000, 0)
	var names metrics.Names
	w, err := results.StepDir(dir).CreateRecords(&names, []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	var batch []metrics.Record
	for i := range 30 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond).UnixNano()
		version := uint64(1)
		switch {
		case at < start.Add(time.Second).UnixNano():
		case i%2 == 0 || at >= start.Add(2500*time.Millisecond).UnixNano():
			version = 2 // instance a, or b once its copy expired
		}
		batch = append(batch, metrics.Record{Seq: uint64(i), Intended: at, Sent: at, Done: at + 1e6, Status: 200, Tag: version})
	}
	if err := w.Write(batch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	events := []results.EventRecord{{AtS: 1, DoneS: 1, Action: "request", Status: 200, Headers: map[string]string{"X-Data-Version": "2"}}}
	if err := results.StepDir(dir).WriteEvents(events); err != nil {
		t.Fatal(err)
	}
	step := &study.Step{Name: "staleness", TagHeader: "X-Data-Version", Params: map[string]string{"kind": "staleness"}}
	s := &study.Study{Name: "cache", Variants: []study.Axis{{Name: "strategy", Values: []string{"inproc"}}, {Name: "instances", Values: []string{"3"}}},
		Load: study.Plan{Steps: []*study.Step{step}}}
	v := s.Matrix()[0]
	ds := analysis.NewDataset(s, []*analysis.Unit{{Rep: 1, Variant: v, Step: step.Name, Dir: results.StepDir(dir),
		Summary: metrics.Summary{StartedAt: start, EndedAt: start.Add(3 * time.Second)}}})
	st, err := staleness(ds, v.Key(), step, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Reads at 1.1, 1.3, …, 2.3 s (odd tenths from b) are stale: 7 of them,
	// the last 1.3 s after the mutation's answer.
	if st.reads != 30 || st.stale != 7 || st.mutations != 1 || st.stillStale {
		t.Fatalf("staleness %+v", st)
	}
	if st.worstFreshS < 1.29 || st.worstFreshS > 1.31 {
		t.Fatalf("time until fresh %.3f s, want 1.3 s", st.worstFreshS)
	}
}

// steadyDataset is a cache run with one instance at two steady rates:
// each strategy's p50 per repetition as given, the same at both rates.
func steadyDataset(p50 map[string][]float64) *analysis.Dataset {
	s := &study.Study{Name: "cache", Repetitions: 3,
		Variants: []study.Axis{{Name: "strategy", Values: []string{"db", "redis", "inproc"}}, {Name: "instances", Values: []string{"1"}}},
		Load: study.Plan{Steps: []*study.Step{
			{Name: "steady-600", Params: map[string]string{"kind": "steady", "rate": "600"}},
			{Name: "steady-100", Params: map[string]string{"kind": "steady", "rate": "100"}},
		}}}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for rep, x := range p50[v.Get("strategy")] {
			for _, st := range s.Load.Steps {
				units = append(units, &analysis.Unit{Rep: rep + 1, Variant: v, Step: st.Name, Summary: metrics.Summary{Latency: metrics.Distribution{P50: x, P99: 3 * x}}})
			}
		}
	}
	return analysis.NewDataset(s, units)
}

// The claim that a strategy is fastest is a conjunction: the winner over
// each rival, repetition by repetition, at the lowest steady rate. Each
// pair is its own comparison, never one ratio over the best of the
// others (biased: the best of several noisy values is too good).
func TestFastestIsEveryPairwiseRatio(t *testing.T) {
	m := cacheMetrics(steadyDataset(map[string][]float64{"db": {4, 5, 6}, "redis": {3, 2, 3}, "inproc": {1, 1, 1.5}}))
	got := m["inproc-vs-best-1"]
	want := map[string][]float64{"inproc/db": {1.0 / 4, 1.0 / 5, 1.5 / 6}, "inproc/redis": {1.0 / 3, 1.0 / 2, 1.5 / 3}}
	if !got.Ratio || got.Kind != claims.Latency {
		t.Fatalf("inproc-vs-best-1 %+v, want a latency ratio", got)
	}
	claimstest.Parts(t, got, want)
	if !strings.Contains(got.Note, "steady-100") {
		t.Errorf("judged on %q, want the lowest rate, steady-100", got.Note)
	}
	if tail := m["redis-tail-vs-best-3"]; tail.Measured() {
		t.Errorf("a run with one instance measured the three-instance tail: %+v", tail)
	}
}

// Verdicts with a known truth: inproc clearly fastest holds; inproc and
// redis alike is no win; a rival not measured leaves the claim open, where
// the best of those measured would have declared a winner.
func TestFastestVerdicts(t *testing.T) {
	below := 1.0
	claim := claims.Claim{ID: "inproc-fastest-1", Metric: "inproc-vs-best-1", Expect: claims.Expect{Below: &below}}
	for _, tc := range []struct {
		name string
		p50  map[string][]float64
		want string
	}{
		{"fastest by far", map[string][]float64{"db": {4, 5, 6}, "redis": {3, 2.5, 3}, "inproc": {1, 1, 1.2}}, claims.Reproduced},
		{"slower than redis", map[string][]float64{"db": {4, 5, 6}, "redis": {1, 1, 1.2}, "inproc": {2, 2.1, 2.3}}, claims.NotReproduced},
		{"alike with redis", map[string][]float64{"db": {4, 5, 6}, "redis": {1, 1.1, 1}, "inproc": {1.1, 1, 1}}, claims.Inconclusive},
		{"redis not measured", map[string][]float64{"db": {4, 5, 6}, "inproc": {1, 1, 1.2}}, claims.Inconclusive},
		{"redis measured once", map[string][]float64{"db": {4, 5, 6}, "redis": {3}, "inproc": {1, 1, 1.2}}, claims.Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := claims.Judge(claim, cacheMetrics(steadyDataset(tc.p50)), nil)
			if r.Verdict != tc.want {
				t.Errorf("%s, want %s (%s)", r.Verdict, tc.want, r.Why)
			}
		})
	}
}
