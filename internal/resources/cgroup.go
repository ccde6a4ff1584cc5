package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/placement"
)

// errNoPeakReset: the kernel's peak counter exists but cannot be reset.
var errNoPeakReset = errors.New("peak counter cannot be reset on this kernel")

// cgroupOps is what differs between cgroup v1 and v2; the bookkeeping
// around it is shared.
type cgroupOps interface {
	method() string
	// prepareRun readies the run's parent cgroup (v2 must delegate
	// controllers to it before service cgroups can use them).
	prepareRun(run ctlPaths) error
	setLimits(svc ctlPaths, l Limits) error
	// setCPUSet changes the cores of a service's cpuset (never nil).
	setCPUSet(svc ctlPaths, cpus placement.CPUs) error
	readCPU(svc ctlPaths) (userSec, sysSec float64, err error)
	readMem(svc ctlPaths) (int64, error)
	// openPeak returns nil when the kernel keeps no peak.
	openPeak(svc ctlPaths) kernelPeak
}

type cgroupAccountant struct {
	ops cgroupOps
	run ctlPaths // msbench-<runID> in each hierarchy

	mu      sync.Mutex
	tracked map[string]*cgroupTracked
}

func newCgroupAccountant(ops cgroupOps, roots ctlPaths, runID string) (*cgroupAccountant, error) {
	if err := validName(runID); err != nil {
		return nil, fmt.Errorf("%s: run id: %w", ops.method(), err)
	}
	a := &cgroupAccountant{ops: ops, run: roots.join("msbench-" + runID), tracked: map[string]*cgroupTracked{}}
	// Leased first, so a hard death between mkdir and clean-up is covered.
	for _, d := range a.run.dirs() {
		lease.Take(lease.Cgroup, d)
	}
	if err := mkdirs(a.run.dirs()); err != nil {
		a.removeRun()
		return nil, fmt.Errorf("%s: create run cgroup: %w", ops.method(), err)
	}
	if err := ops.prepareRun(a.run); err != nil {
		a.removeRun()
		return nil, fmt.Errorf("%s: %w", ops.method(), err)
	}
	return a, nil
}

func (a *cgroupAccountant) Method() string { return a.ops.method() }

func (a *cgroupAccountant) Cpuset() bool { return a.run.cpuset != "" }

func (a *cgroupAccountant) Track(name string, pid int, limits Limits) (Tracked, error) {
	t, err := a.track(name, pid, limits)
	if err != nil {
		return nil, fmt.Errorf("track %s (%s): %w", name, a.ops.method(), err)
	}
	return t, nil
}

func (a *cgroupAccountant) track(name string, pid int, limits Limits) (*cgroupTracked, error) {
	if err := checkTrackArgs(name, limits); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.tracked[name]; dup {
		return nil, errors.New("already tracked")
	}
	svc := a.run.join(name)
	if err := a.setup(svc, pid, limits); err != nil {
		_ = removeDirs(svc.dirs())
		return nil, err
	}
	t := &cgroupTracked{name: name, svc: svc, acct: a, peak: a.ops.openPeak(svc)}
	a.tracked[name] = t
	return t, nil
}

// setup applies limits before moving the process, so it never runs
// uncapped inside its own cgroup.
func (a *cgroupAccountant) setup(svc ctlPaths, pid int, limits Limits) error {
	if err := mkdirs(svc.dirs()); err != nil {
		return err
	}
	if err := a.ops.setLimits(svc, limits); err != nil {
		return err
	}
	return moveTree(svc.dirs(), pid)
}

func (a *cgroupAccountant) Cleanup() error {
	a.mu.Lock()
	open := make([]*cgroupTracked, 0, len(a.tracked))
	for _, t := range a.tracked {
		open = append(open, t)
	}
	a.mu.Unlock()
	var errs []error
	for _, t := range open {
		errs = append(errs, t.Close())
	}
	errs = append(errs, a.removeRun())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleanup %s: %w", a.ops.method(), err)
	}
	return nil
}

// removeRun removes the run's cgroups and gives back the lease on those
// that are gone.
func (a *cgroupAccountant) removeRun() error {
	err := removeDirs(a.run.dirs())
	for _, d := range a.run.dirs() {
		if _, serr := os.Stat(d); errors.Is(serr, fs.ErrNotExist) {
			lease.Release(lease.Cgroup, d)
		}
	}
	return err
}

func (a *cgroupAccountant) forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tracked, name)
}

type cgroupTracked struct {
	name string
	svc  ctlPaths
	acct *cgroupAccountant

	mu      sync.Mutex
	peak    kernelPeak // nil: use sampled
	sampled sampledPeak
	split   monotonicSplit
	closed  bool
}

func (t *cgroupTracked) Name() string { return t.name }

func (t *cgroupTracked) Usage() (Usage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, err := t.usage()
	if err != nil {
		return Usage{}, fmt.Errorf("usage %s: %w", t.name, err)
	}
	return u, nil
}

func (t *cgroupTracked) usage() (Usage, error) {
	if t.closed {
		return Usage{}, errors.New("closed")
	}
	var u Usage
	var err error
	if u.UserSec, u.SysSec, err = t.acct.ops.readCPU(t.svc); err != nil {
		return Usage{}, err
	}
	u.UserSec, u.SysSec = t.split.adjust(u.UserSec, u.SysSec)
	if u.CurrentMemBytes, err = t.acct.ops.readMem(t.svc); err != nil {
		return Usage{}, err
	}
	u.PeakMemBytes = t.sampled.observe(u.CurrentMemBytes)
	if t.peak != nil {
		if u.PeakMemBytes, err = t.peak.read(); err != nil {
			return Usage{}, err
		}
	}
	return u, nil
}

func (t *cgroupTracked) ResetPeak() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("reset peak %s: closed", t.name)
	}
	if t.peak != nil {
		err := t.peak.reset()
		if errors.Is(err, errNoPeakReset) {
			// From now on the sampled maximum is the only resettable peak.
			_ = t.peak.close()
			t.peak = nil
		} else if err != nil {
			return fmt.Errorf("reset peak %s: %w", t.name, err)
		}
	}
	cur, err := t.acct.ops.readMem(t.svc)
	if err != nil {
		return fmt.Errorf("reset peak %s: %w", t.name, err)
	}
	t.sampled.reset(cur)
	return nil
}

// Move changes the cpuset, whose tasks the kernel then moves, and sets
// each thread's affinity too: a task keeps the affinity it was given at
// its fork as a request, which the next cpuset change would read back.
func (t *cgroupTracked) Move(cpus placement.CPUs) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("move %s: closed", t.name)
	}
	if t.svc.cpuset != "" {
		if err := t.acct.ops.setCPUSet(t.svc, cpus); err != nil {
			return fmt.Errorf("move %s to cores %s: %w", t.name, cpus, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(t.svc.cpu, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("move %s: %w", t.name, err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("move %s: cgroup.procs holds %q", t.name, f)
		}
		if err := placement.Process(pid, cpus); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move %s: %w", t.name, err)
		}
	}
	return nil
}

func (t *cgroupTracked) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		if t.peak != nil {
			_ = t.peak.close()
		}
	}
	// Removal is retried on every Close until it succeeds, so a Close that
	// came too early (processes still running) can be repeated.
	if err := removeDirs(t.svc.dirs()); err != nil {
		return fmt.Errorf("close %s: %w", t.name, err)
	}
	t.acct.forget(t.name)
	return nil
}
