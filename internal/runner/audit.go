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
func markNoise(d *deployment) noiseMark {
	m := noiseMark{at: time.Now(), ownCPUS: selfCPU(), untracked: d.untrackedCPU()}
	m.machine, m.err = resources.ReadMachineCPU()
	return m
}

// untrackedCPU is the CPU so far of each dependency process (with its
// descendants) that the accountant does not track: those a restart event
// started, which are the run's, not foreign. Keyed by pid and start time.
func (d *deployment) untrackedCPU() map[[2]uint64]float64 {
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

// audit judges the step between two marks: run is what the step's services
// and dependencies used meanwhile (resources.json).
func audit(from, to noiseMark, summary metrics.Summary, run results.StepResources) (results.Audit, error) {
	if from.err != nil || to.err != nil {
		return results.Audit{}, fmt.Errorf("noise audit: %w", errors.Join(from.err, to.err))
	}
	runCPU := 0.0
	for _, s := range run.Services {
		runCPU += s.CPUUserS + s.CPUSysS
	}
	for k, cpu := range to.untracked {
		runCPU += cpu - from.untracked[k] // 0 for a process started meanwhile
	}
	return results.NewAudit(results.AuditInput{
		Summary:     summary,
		Machine:     to.machine.Sub(from.machine),
		MsbenchCPUS: to.ownCPUS - from.ownCPUS,
		RunCPUS:     runCPU,
		WindowS:     to.at.Sub(from.at).Seconds(),
	}), nil
}

// invalidate marks a step whose audit failed invalid in its summary too,
// so that every reader of summary.json (msbench compare) sees it.
func invalidate(s *metrics.Summary, a results.Audit) {
	if a.OK {
		return
	}
	s.Valid = false
	s.Warnings = append(s.Warnings, "noise audit failed, the result is invalid: "+strings.Join(a.Reasons, "; "))
}
