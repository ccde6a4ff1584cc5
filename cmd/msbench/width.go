package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// minRepetitions is the fewest repetitions a run that stops on its
// intervals' width makes: in issue 23's simulation, 95% intervals over 3
// repetitions covered the truth only 91.6–94.1% of the time.
const minRepetitions = 5

// minBudget is the least --budget taken: a repetition of a study takes
// minutes, so a shorter budget could not pay for one more.
const minBudget = time.Minute

// widthRule decides when a run given --target-width has measured enough:
// when every interval its verdicts read is within the target, or when
// its budget cannot pay for another repetition.
type widthRule struct {
	target float64
	budget
	precision func(dir string, target float64) (report.Precision, error)
}

// budget bounds how long a command that adds repetitions goes on.
type budget struct {
	limit time.Duration // 0: none
	start time.Time     // when this msbench command began
	// before is how many repetitions' worth of units a resumed run had
	// measured before this invocation, whose time it did not spend.
	before float64
	now    func() time.Time
}

// overrun says whether another repetition would end the command past its
// limit, after reps repetitions, and if so why. A repetition's time is
// estimated from those this invocation measured, builds included: an
// estimate on the long side stops a repetition early rather than overrun
// the budget.
func (b budget) overrun(reps int) (bool, string) {
	measured := float64(reps) - b.before
	if b.limit <= 0 || measured <= 0 {
		return false, ""
	}
	spent := b.now().Sub(b.start)
	each := time.Duration(float64(spent) / measured)
	if spent+each <= b.limit {
		return false, ""
	}
	return true, fmt.Sprintf("another repetition would overrun the %v budget (~%v each, %v spent)", b.limit, each.Round(time.Second), spent.Round(time.Second))
}

// enough is the runner's Enough: asked after reps repetitions.
func (w widthRule) enough(dir string, reps int) (bool, string, error) {
	p, err := w.precision(dir, w.target)
	if err != nil {
		return false, "", fmt.Errorf("the run's precision: %w", err)
	}
	if p.Narrow() {
		return true, p.String(), nil
	}
	if over, why := w.overrun(reps); over {
		return true, why + ", and " + p.String(), nil
	}
	return false, p.String(), nil
}

// measurePrecision is the precision of the run in dir as its report
// judges it.
func measurePrecision(dir string, target float64) (report.Precision, error) {
	ds, err := analysis.Load(dir)
	if err != nil {
		return report.Precision{}, err
	}
	return report.Measure(ds, target, report.Options{}), nil
}

// stopOnWidth reads --target-width, --budget and --max-repetitions for
// the study s about to run, of which before repetitions' worth were
// measured already (a resumed run): without --target-width the run makes
// its repetitions and stops (nil rule); with it the study's count is
// raised to minRepetitions and the rule returned.
func stopOnWidth(flags *pflag.FlagSet, f runFlags, s *study.Study, start time.Time, before float64) (*widthRule, error) {
	if !flags.Changed("target-width") {
		for _, name := range []string{"budget", "max-repetitions"} {
			if flags.Changed(name) {
				return nil, usagef("--%s bounds the repetitions --target-width adds; give --target-width too", name)
			}
		}
		return nil, nil
	}
	target, err := parseShare(f.targetWidth)
	if err != nil {
		return nil, usagef("--target-width %q: %v", f.targetWidth, err)
	}
	if target == 0 {
		return nil, usagef("--target-width must be above 0%%: no interval is that narrow")
	}
	if flags.Changed("budget") && f.budget < minBudget {
		return nil, usagef("--budget must be at least %v (a repetition takes minutes), got %v", minBudget, f.budget)
	}
	s.Repetitions = max(s.Repetitions, minRepetitions)
	if f.maxRepetitions < s.Repetitions {
		return nil, usagef("--max-repetitions %d is below the %d repetitions the run makes before it looks at its intervals", f.maxRepetitions, s.Repetitions)
	}
	return &widthRule{target: target, budget: budget{limit: f.budget, start: start, before: before, now: time.Now}, precision: measurePrecision}, nil
}

// resumedFrom is what the run in dir reached: its count of repetitions
// (raised by a run that added some) and how many repetitions' worth of
// units it measured; zero for a directory that is no run, which the
// runner refuses, saying why.
func resumedFrom(dir string) (reps int, measured float64) {
	run, err := results.Open(dir)
	if err != nil {
		return 0, 0
	}
	began, err := run.ReadStudy()
	if err != nil {
		return 0, 0
	}
	perRep := len(began.Runs()) * max(len(began.Load.Steps), 1)
	return began.Repetitions, float64(len(run.State().Done)) / float64(perRep)
}
