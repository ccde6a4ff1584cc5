package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// The run stops when every interval is narrow enough, or when another
// repetition, as long as those this invocation measured, would overrun
// the budget; a resumed run's earlier repetitions cost it nothing.
func TestWidthRuleStopsWhenNarrowOrOutOfBudget(t *testing.T) {
	start := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	narrow := report.Precision{Target: 0.1, Intervals: 3, Widest: 0.08, What: "claim a"}
	wide := report.Precision{Target: 0.1, Intervals: 3, Wider: 2, Widest: 0.25, What: "claim b"}
	for _, c := range []struct {
		name      string
		precision report.Precision
		budget    time.Duration
		spent     time.Duration
		reps      int
		before    float64
		done      bool
		why       string
	}{
		{"narrow", narrow, 0, time.Hour, 7, 0, true, "every one of the 3 intervals the verdicts read is within 10.0% (the widest 8.0%, claim a)"},
		{"wide, no budget", wide, 0, 10 * time.Hour, 5, 0, false, "2 of the 3 intervals the verdicts read are wider than 10.0% (the widest 25.0%, claim b)"},
		// 5 repetitions in 20m: 4m each, and 24m fits in 30m.
		{"wide, another fits", wide, 30 * time.Minute, 20 * time.Minute, 5, 0, false, "2 of the 3 intervals"},
		// 6 in 27m: 4m30s each, and 31m30s does not fit.
		{"wide, another would overrun", wide, 30 * time.Minute, 27 * time.Minute, 6, 0, true, "another repetition would overrun the 30m0s budget (~4m30s each, 27m0s spent), and 2 of the 3 intervals"},
		// Resumed after 4.5 repetitions: the 27m paid for 1.5, 18m each.
		{"resumed, another would overrun", wide, 30 * time.Minute, 27 * time.Minute, 6, 4.5, true, "(~18m0s each, 27m0s spent)"},
		// Resumed with every repetition measured before: no estimate yet.
		{"resumed, nothing measured yet", wide, 30 * time.Minute, 29 * time.Minute, 6, 6, false, "2 of the 3 intervals"},
		{"narrow beats the budget", narrow, 30 * time.Minute, 29 * time.Minute, 5, 0, true, "every one of the 3 intervals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := widthRule{target: 0.1, budget: budget{limit: c.budget, start: start, before: c.before,
				now: func() time.Time { return start.Add(c.spent) }},
				precision: func(dir string, target float64) (report.Precision, error) {
					if dir != "run-dir" || target != 0.1 {
						t.Errorf("precision of %q at %g, want run-dir at 0.1", dir, target)
					}
					return c.precision, nil
				}}
			done, why, err := w.enough("run-dir", c.reps)
			if err != nil || done != c.done || !strings.Contains(why, c.why) {
				t.Errorf("done %v, %q, %v; want done %v, %q", done, why, err, c.done, c.why)
			}
		})
	}
	w := widthRule{target: 0.1, budget: budget{now: time.Now}, precision: func(string, float64) (report.Precision, error) {
		return report.Precision{}, errors.New("damaged summary.json")
	}}
	if _, _, err := w.enough("run-dir", 5); err == nil || !strings.Contains(err.Error(), "damaged summary.json") {
		t.Errorf("a run whose precision cannot be read: %v", err)
	}
}

// A resumed run goes on from the count it reached and knows how much of
// it was measured before.
func TestResumedFrom(t *testing.T) {
	s := &study.Study{Name: "x", Repetitions: 7, Variants: []study.Axis{{Name: "v", Values: []string{"a", "b"}}}, AA: "a",
		Load: study.Plan{Steps: []*study.Step{{Name: "s1"}, {Name: "s2"}}}}
	run, err := results.Create(t.TempDir(), "x", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteStudy(nil, s); err != nil {
		t.Fatal(err)
	}
	// 3 runs (a, b, a@aa) × 2 steps a repetition; 9 units are 1.5 of them.
	for i := range 9 {
		if err := run.MarkDone(results.UnitKey(i/6+1, s.Runs()[i%6/2].Key(), s.Load.Steps[i%2].Name)); err != nil {
			t.Fatal(err)
		}
	}
	if reps, measured := resumedFrom(run.Dir); reps != 7 || math.Abs(measured-1.5) > 1e-9 {
		t.Errorf("resumed from %d repetitions, %g measured; want 7, 1.5", reps, measured)
	}
	if reps, measured := resumedFrom(t.TempDir()); reps != 0 || measured != 0 {
		t.Errorf("a directory that is no run: %d, %g", reps, measured)
	}
}

// End to end: a target no run reaches adds repetitions up to the most
// asked, records why it stopped, and says so in the report; resumed with
// a higher most, the run goes on from the count it reached.
func TestRunUntilTheMostRepetitions(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"run", "../../internal/runner/testdata/aa.yaml", "--root", "../..", "--results", out, "--target-width", "0.0001%"}
	if code := run(context.Background(), append(args, "--max-repetitions", "6"), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "aa-*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	check := func(reps int) {
		t.Helper()
		r, err := results.Open(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.ReadStudy()
		prov, _ := r.ReadProvenance()
		md, _ := os.ReadFile(filepath.Join(dirs[0], "report.md"))
		stopped := fmt.Sprintf("stopped at the most repetitions asked, %d", reps)
		if err != nil || s.Repetitions != reps || len(r.State().Done) != 3*reps || !strings.Contains(prov.Stopped, "wider than 0.0%") || !strings.Contains(prov.Stopped, stopped) ||
			!strings.Contains(string(md), fmt.Sprintf("it stopped after %d: ", reps)) {
			t.Errorf("%d repetitions (%v), %d units done, stopped %q; want %d, %q, and the report saying so\n%s", s.Repetitions, err, len(r.State().Done), prov.Stopped, reps, stopped, stderr.String())
		}
	}
	check(6)
	stderr.Reset()
	if code := run(context.Background(), append(args, "--max-repetitions", "7", "--resume", dirs[0]), &stdout, &stderr); code != 0 {
		t.Fatalf("resume: exit %d:\n%s", code, stderr.String())
	}
	check(7)
}
