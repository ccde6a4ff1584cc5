package cache

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/analysis"
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

// The claims' latency metrics compare, run by run, the claimed winner with
// the best of the others at the lowest steady rate.
func TestLatencyMetricsArePerRun(t *testing.T) {
	s := &study.Study{Name: "cache", Repetitions: 3,
		Variants: []study.Axis{{Name: "strategy", Values: []string{"db", "redis", "inproc"}}, {Name: "instances", Values: []string{"1"}}},
		Load: study.Plan{Steps: []*study.Step{
			{Name: "steady-600", Params: map[string]string{"kind": "steady", "rate": "600"}},
			{Name: "steady-100", Params: map[string]string{"kind": "steady", "rate": "100"}},
		}}}
	p50 := map[string][]float64{"db": {4, 5, 6}, "redis": {3, 2, 3}, "inproc": {1, 1, 1.5}}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for rep, x := range p50[v.Get("strategy")] {
			for _, st := range s.Load.Steps {
				units = append(units, &analysis.Unit{Rep: rep + 1, Variant: v, Step: st.Name, Summary: metrics.Summary{Latency: metrics.Distribution{P50: x}}})
			}
		}
	}
	m := cacheMetrics(analysis.NewDataset(s, units))
	got := m["inproc-vs-best-1"]
	want := []float64{1.0 / 3, 1.0 / 2, 1.5 / 3}
	slices.Sort(got.PerRun)
	slices.Sort(want)
	if !got.Ratio || len(got.PerRun) != 3 || math.Abs(got.PerRun[0]-want[0]) > 1e-9 || math.Abs(got.PerRun[2]-want[2]) > 1e-9 {
		t.Fatalf("inproc-vs-best-1 %+v, want per-run %v", got, want)
	}
	if !strings.Contains(got.Note, "steady-100") {
		t.Errorf("judged on %q, want the lowest rate, steady-100", got.Note)
	}
}
