package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// A step says how it was measured: interleaved with its rounds and what
// the waiting deployments cost, or in one piece and why.
func TestDesignSaysHowAStepWasMeasured(t *testing.T) {
	s := &study.Study{Name: "d", Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Interleave: study.Interleaving{Slice: 5 * time.Second, Warmup: 500 * time.Millisecond, Rounds: 5}}
	sliced := &study.Step{Name: "sliced", Interleaved: true}
	single := &study.Step{Name: "single", Interleaved: true}
	faults := &study.Step{Name: "faults", Sequential: "its events happen at moments of one load"}
	beside := &study.Step{Name: "beside", Sequential: "fixed iterations per user"}
	old := &study.Step{Name: "old"}
	s.Load.Steps = []*study.Step{sliced, single, faults, beside, old}
	rounds := map[string]int{"sliced": 4, "single": 1}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for _, st := range s.Load.Steps {
			u := &analysis.Unit{Rep: 1, Variant: v, Step: st.Name, Summary: metrics.Summary{DurationS: 20}}
			if st.Interleaved {
				u.Slices = &results.Slices{Rounds: rounds[st.Name]}
				u.Resources.IdleCPUS = 2 // of 20 s: a tenth of a core
			}
			if st == beside {
				u.Resources.IdleCPUS = 1 // the other deployments, up meanwhile
			}
			units = append(units, u)
		}
	}
	ds := analysis.NewDataset(s, units)
	for _, c := range []struct {
		step *study.Step
		want []string
	}{
		{sliced, []string{"Measured interleaved", "(median 4 rounds)", "after 500ms of warm-up", "ran on meanwhile", "a median 10.0% of a core"}},
		{single, []string{"(median 1 round: one slice each, so the variants' turns come closer in time but nothing averages within a step)"}},
		{faults, []string{"Measured in one piece per variant, variant after variant: its events happen at moments of one load."}},
		{beside, []string{"variant after variant: fixed iterations per user. The repetition's other deployments were up meanwhile and used a median 5.0% of a core"}},
		{old, []string{"variant after variant: the run predates interleaving."}},
	} {
		got := design(ds, c.step)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.step.Name, got, w)
			}
		}
	}
	// A step measured with no other deployment up says nothing of them.
	if got := design(ds, faults); strings.Contains(got, "other deployments") {
		t.Errorf("faults: %q", got)
	}
}

// The noise of interleaved slices is split between deployments and
// within one as it was drawn: a step whose repetitions differ far more
// than their slices shows nearly all of it between.
func TestSliceSpreadSplitsTheNoise(t *testing.T) {
	s := &study.Study{Name: "d", Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}}}
	s.Load.Steps = []*study.Step{{Name: "sliced", Interleaved: true}, {Name: "whole"}}
	r := rand.New(rand.NewPCG(1, 2))
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for rep := 1; rep <= 6; rep++ {
			luck := 0.10 * r.NormFloat64()
			sl := &results.Slices{Rounds: 5}
			for k := range 5 {
				sl.Slices = append(sl.Slices, results.Slice{Number: k + 1, P50Ms: 2 * math.Exp(luck+0.01*r.NormFloat64())})
			}
			units = append(units,
				&analysis.Unit{Rep: rep, Variant: v, Step: "sliced", Slices: sl},
				&analysis.Unit{Rep: rep, Variant: v, Step: "whole"})
		}
	}
	tab, ok := sliceSpread(analysis.NewDataset(s, units))
	if !ok || len(tab.Rows) != 1 || tab.Rows[0][0] != "sliced" || tab.Rows[0][1] != "2" || tab.Rows[0][2] != "6" || tab.Rows[0][3] != "5.0" {
		t.Fatalf("table %v", tab.Rows)
	}
	if share, err := strconv.ParseFloat(strings.TrimSuffix(tab.Rows[0][6], "%"), 64); err != nil || share < 90 {
		t.Errorf("share between %s, want over 90%% (σ 10%% between, 1%% within)", tab.Rows[0][6])
	}
	if _, ok := sliceSpread(analysis.NewDataset(s, units[:2])); ok {
		t.Error("one repetition split the noise")
	}
}

// A study with many steps says once how each group of them was measured.
func TestAllStepsSaysHowEachGroupWasMeasured(t *testing.T) {
	s := &study.Study{Name: "many", Variants: []study.Axis{{Name: "v", Values: []string{"a"}}}}
	for i := range manySteps + 1 {
		st := &study.Step{Name: fmt.Sprintf("s%d", i), Interleaved: i > 0}
		if i == 0 {
			st.Sequential = "its events happen at moments of one load"
		}
		s.Load.Steps = append(s.Load.Steps, st)
	}
	sec := allStepsSection(analysis.NewDataset(s, nil))
	if len(sec.Text) != 2 || !strings.HasPrefix(sec.Text[0], "s0: Measured in one piece") || !strings.HasPrefix(sec.Text[1], "s1, s2, s3, s4, s5, s6, s7, s8: Measured interleaved") {
		t.Errorf("text %q", sec.Text)
	}
}

// A closed step whose users each sent fewer than SteadyCycles requests a
// slice says it shows the start of its load; one with more, or an open
// one, does not.
func TestDesignWarnsOfSlicesOfFirstWaves(t *testing.T) {
	s := &study.Study{Name: "d", Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}},
		Interleave: study.Interleaving{Slice: 5 * time.Second, Warmup: time.Second, Rounds: 3}}
	short := &study.Step{Name: "short", Interleaved: true}
	short.Load.Users = 200
	long := &study.Step{Name: "long", Interleaved: true}
	long.Load.Users = 20
	open := &study.Step{Name: "open", Interleaved: true}
	open.Load.Open, open.Load.Rate = true, 5
	// 150 users for 10 requests: 10 users, one request each.
	few := &study.Step{Name: "few", Interleaved: true}
	few.Load.Users = 150
	s.Load.Steps = []*study.Step{short, long, open, few}
	requests := map[string][]int64{"short": {270, 280, 260}, "long": {100, 90, 110}, "open": {20, 20, 20}, "few": {10, 10, 10}}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for _, st := range s.Load.Steps {
			sl := &results.Slices{Rounds: 3}
			for k, n := range requests[st.Name] {
				sl.Slices = append(sl.Slices, results.Slice{Number: k + 1, Requests: n})
			}
			units = append(units, &analysis.Unit{Rep: 1, Variant: v, Step: st.Name, Slices: sl, Summary: metrics.Summary{DurationS: 15}})
		}
	}
	ds := analysis.NewDataset(s, units)
	if got := design(ds, short); !strings.Contains(got, "Each user sent a median 1.4 requests a slice, fewer than 4") {
		t.Errorf("200 users, 270 requests a slice: %q", got)
	}
	if got := design(ds, few); !strings.Contains(got, "Each user sent a median 1.0 requests a slice") {
		t.Errorf("150 users, 10 requests a slice: %q", got)
	}
	for _, st := range []*study.Step{long, open} {
		if got := design(ds, st); strings.Contains(got, "Each user sent") {
			t.Errorf("%s: %q", st.Name, got)
		}
	}
}
