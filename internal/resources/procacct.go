package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// snapshotMaxAge lets the Usage calls of one sampling round share a single
// /proc scan: scanning every process once per service would cost the
// machine under test noticeable CPU.
const snapshotMaxAge = 20 * time.Millisecond

// procAccountant sums CPU and RSS over each tracked process tree from /proc.
// It cannot enforce limits, and it loses descendants that are reparented
// away from the tree (daemonizing children, orphans of a dead parent).
type procAccountant struct {
	mu      sync.Mutex
	snap    []procfs.Stat
	snapAt  time.Time
	tracked map[string]*procTracked
}

func newProcAccountant() *procAccountant {
	return &procAccountant{tracked: map[string]*procTracked{}}
}

func (a *procAccountant) Method() string { return MethodProc }

// Cpuset is false: without cgroups a placement is CPU affinity only.
func (a *procAccountant) Cpuset() bool { return false }

func (a *procAccountant) snapshot() ([]procfs.Stat, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.snap != nil && time.Since(a.snapAt) < snapshotMaxAge {
		return a.snap, nil
	}
	s, err := procfs.All()
	if err != nil {
		return nil, err
	}
	a.snap, a.snapAt = s, time.Now()
	return s, nil
}

func (a *procAccountant) Track(name string, pid int, limits Limits) (Tracked, error) {
	t, err := a.track(name, pid, limits)
	if err != nil {
		return nil, fmt.Errorf("track %s (%s): %w", name, MethodProc, err)
	}
	return t, nil
}

func (a *procAccountant) track(name string, pid int, limits Limits) (*procTracked, error) {
	if err := checkTrackArgs(name, limits); err != nil {
		return nil, err
	}
	if !limits.IsZero() {
		return nil, fmt.Errorf("%w without cgroups (asked for %+v)", ErrLimitsUnsupported, limits)
	}
	root, err := procfs.ReadStat(pid)
	if err != nil {
		return nil, err
	}
	if root.Dead() {
		return nil, fmt.Errorf("pid %d: %w", pid, os.ErrProcessDone)
	}
	t := &procTracked{name: name, pid: pid, startTime: root.StartTime, acct: a}
	a.mu.Lock()
	_, dup := a.tracked[name]
	if !dup {
		a.tracked[name] = t
		a.snap = nil // the new tree must be seen from its first Usage on
	}
	a.mu.Unlock()
	if dup {
		return nil, errors.New("already tracked")
	}
	if _, err := t.Usage(); err != nil {
		a.forget(name)
		return nil, err
	}
	// CPU counts from Track on, as with a fresh cgroup.
	t.baseUser, t.baseSys = t.ticksUser, t.ticksSys
	t.last = Usage{CurrentMemBytes: t.last.CurrentMemBytes, PeakMemBytes: t.last.CurrentMemBytes}
	return t, nil
}

func (a *procAccountant) forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tracked, name)
}

// Cleanup closes what is still tracked; there is nothing to remove.
func (a *procAccountant) Cleanup() error {
	a.mu.Lock()
	open := make([]*procTracked, 0, len(a.tracked))
	for _, t := range a.tracked {
		open = append(open, t)
	}
	a.snap = nil
	a.mu.Unlock()
	for _, t := range open {
		_ = t.Close() // cannot fail
	}
	return nil
}

type procTracked struct {
	name      string
	pid       int
	startTime uint64 // tells the tracked process from a later one with its pid
	acct      *procAccountant

	mu                  sync.Mutex
	baseUser, baseSys   uint64
	ticksUser, ticksSys uint64 // latest tree totals
	last                Usage
	peak                sampledPeak
	closed              bool
}

func (t *procTracked) Name() string { return t.name }

// Usage sums the tree's ticks and RSS. Once the tracked process is gone its
// last values are returned, frozen, with no current memory. CPU never goes
// down, although reaped descendants whose parent is outside the tree take
// their ticks with them.
func (t *procTracked) Usage() (Usage, error) {
	stats, err := t.acct.snapshot()
	if err != nil {
		return Usage{}, fmt.Errorf("usage %s: %w", t.name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return Usage{}, fmt.Errorf("usage %s: closed", t.name)
	}
	tree := procfs.Descendants(stats, t.pid)
	if len(tree) == 0 || tree[0].StartTime != t.startTime {
		t.last.CurrentMemBytes = 0
		return t.last, nil
	}
	var user, sys uint64
	var rss int64
	for _, s := range tree {
		// Children's ticks (cutime) cover descendants already reaped inside
		// the tree; live ones are counted by their own entries.
		user += s.UTime + s.CUTime
		sys += s.STime + s.CSTime
		rss += s.RSSPages
	}
	t.ticksUser, t.ticksSys = max(t.ticksUser, user), max(t.ticksSys, sys)
	t.last.UserSec = float64(t.ticksUser-min(t.baseUser, t.ticksUser)) / procfs.ClockTicks
	t.last.SysSec = float64(t.ticksSys-min(t.baseSys, t.ticksSys)) / procfs.ClockTicks
	t.last.CurrentMemBytes = rss * int64(os.Getpagesize())
	t.last.PeakMemBytes = t.peak.observe(t.last.CurrentMemBytes)
	return t.last, nil
}

func (t *procTracked) ResetPeak() error {
	if _, err := t.Usage(); err != nil {
		return fmt.Errorf("reset peak: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peak.reset(t.last.CurrentMemBytes)
	t.last.PeakMemBytes = t.last.CurrentMemBytes
	return nil
}

// Move sets the affinity of every thread of the tracked process and of
// its descendants.
func (t *procTracked) Move(cpus placement.CPUs) error {
	stats, err := procfs.All()
	if err != nil {
		return fmt.Errorf("move %s: %w", t.name, err)
	}
	for _, st := range procfs.Descendants(stats, t.pid) {
		if st.Dead() {
			continue
		}
		if err := placement.Process(st.PID, cpus); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move %s: %w", t.name, err)
		}
	}
	return nil
}

func (t *procTracked) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.acct.forget(t.name)
	return nil
}
