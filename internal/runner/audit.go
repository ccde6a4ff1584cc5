package runner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
)

// noiseMark is what the noise audit reads at each end of a step's window:
// the machine's CPU time by kind, msbench's own, and that of the run's
// processes the accountant does not track.
type noiseMark struct {
	at        time.Time
	machine   resources.MachineCPU
	ownCPUS   float64
	untracked map[[2]uint64]float64
	err       error
}

// markNoise reads the marks; d may be nil (no deployment).
func markNoise(d *Deployment) noiseMark {
	m := noiseMark{at: time.Now(), ownCPUS: selfCPU(), untracked: d.untrackedCPU()}
	m.machine, m.err = resources.ReadMachineCPU()
	return m
}

// untrackedCPU is the CPU so far of each dependency process (with its
// descendants) that the accountant does not track: those a restart event
// started, which are the run's, not foreign. Keyed by pid and start time.
func (d *Deployment) untrackedCPU() map[[2]uint64]float64 {
	out := map[[2]uint64]float64{}
	if d == nil {
		return out
	}
	tracked := map[int]bool{}
	for _, in := range d.instances {
		tracked[in.proc.Pid()] = true
	}
	var stats []procfs.Stat
	for _, dep := range d.deps {
		for _, p := range dep.Processes() {
			if tracked[p.Pid()] {
				continue
			}
			if stats == nil {
				var err error
				if stats, err = procfs.All(); err != nil {
					return out
				}
			}
			tree := procfs.Descendants(stats, p.Pid())
			if len(tree) == 0 {
				continue
			}
			var ticks uint64
			for _, s := range tree {
				ticks += s.UTime + s.STime + s.CUTime + s.CSTime
			}
			out[[2]uint64{uint64(p.Pid()), tree[0].StartTime}] = float64(ticks) / procfs.ClockTicks
		}
	}
	return out
}

// selfCPU is msbench's user and system time so far, every thread.
func selfCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// window is what the noise audit reads of the window between two marks,
// given what the run's accounted processes used meanwhile: the
// dependency processes a restart started count as the run's too.
func window(from, to noiseMark, runCPU float64) (results.AuditInput, error) {
	if from.err != nil || to.err != nil {
		return results.AuditInput{}, fmt.Errorf("noise audit: %w", errors.Join(from.err, to.err))
	}
	for k, cpu := range to.untracked {
		runCPU += cpu - from.untracked[k] // 0 for a process started meanwhile
	}
	return results.AuditInput{
		Machine:     to.machine.Sub(from.machine),
		MsbenchCPUS: to.ownCPUS - from.ownCPUS,
		RunCPUS:     runCPU,
		WindowS:     to.at.Sub(from.at).Seconds(),
		Windows:     1,
	}, nil
}

// add is the audit's input over two windows.
func add(a, b results.AuditInput) results.AuditInput {
	return results.AuditInput{
		Machine:     a.Machine.Add(b.Machine),
		MsbenchCPUS: a.MsbenchCPUS + b.MsbenchCPUS,
		RunCPUS:     a.RunCPUS + b.RunCPUS,
		WindowS:     a.WindowS + b.WindowS,
		Windows:     a.Windows + b.Windows,
	}
}

// invalidate carries the audit's verdict into the step's summary, so that
// every reader of summary.json (msbench compare) sees it: a failed audit
// marks the step invalid, and a window too short for some of its checks
// says which.
func invalidate(s *metrics.Summary, a results.Audit) {
	if !a.OK {
		s.Valid = false
		s.Warnings = append(s.Warnings, "noise audit failed, the result is invalid: "+strings.Join(a.Reasons, "; "))
	}
	if note := unjudged(a); note != "" {
		s.Warnings = append(s.Warnings, note)
	}
}

// unjudged says which of the audit's CPU checks its window was too short
// to judge, "" when none. /proc/stat counts in ticks, so the audit fails
// steal or foreign CPU only past its allowance plus the ticks' rounding
// (TickSlackS). Where the rounding exceeds the allowance itself, under
// 0.4 s for steal and 0.2 s for foreign CPU on any number of cores, a
// busy loop on one of two cores can pass: a 0.075 s step with 35% of the
// machine foreign did. Such a step passes, but not silently.
func unjudged(a results.Audit) string {
	total := float64(a.MachineCores) * a.WindowS
	var checks []string
	for _, c := range []struct {
		what  string
		limit float64
	}{
		{"the hypervisor's steal", results.MaxSteal},
		{"processes outside the run", results.MaxForeignCPU},
	} {
		if a.TickSlackS > c.limit*total {
			checks = append(checks, fmt.Sprintf("%s (only over %.0f%% of the machine fails it, not %.0f%%)", c.what, 100*(c.limit+a.TickSlackS/total), 100*c.limit))
		}
	}
	if len(checks) == 0 {
		return ""
	}
	return fmt.Sprintf("the noise audit's window, %.3f s, is too short to judge %s: /proc/stat's ticks may be off by %.2f s of CPU", a.WindowS, strings.Join(checks, " or "), a.TickSlackS)
}
