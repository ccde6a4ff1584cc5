// Package placement says which CPU cores a process may run on, and puts it
// there: the load generator on some cores, the services under test on
// others, so that on a small machine the lab measures the system and not
// the generator competing with it.
//
// A set of cores is written as the kernel writes it (cpuset.cpus,
// Cpus_allowed_list): "0", "0-1", "0,2", "0-3,6". Processes are placed
// through CPU affinity (sched_setaffinity) on every thread; the runner adds
// a cgroup cpuset where the machine offers that controller (package
// resources).
package placement

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Methods by which a placement is applied, recorded in provenance.
const (
	MethodCpuset   = "cpuset"   // a cgroup cpuset (v1 or v2), plus affinity from the start
	MethodAffinity = "affinity" // sched_setaffinity on every thread
	MethodNone     = "none"     // not placed: every core msbench may use
)

// CPUs is a set of core numbers, sorted, each once. Nil means no placement.
// In JSON and YAML it is the kernel's list syntax, e.g. "0-1,3".
type CPUs []int

// maxCPU bounds core numbers: the affinity mask holds 1024 cores.
const maxCPU = 1023

// Parse reads a core list: "0", "0-1", "0,2", "0-3,6" (spaces around the
// parts allowed). It checks the syntax only; whether the cores exist on
// this machine is Check's business, at run time.
func Parse(s string) (CPUs, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New(`empty core list: want e.g. "0", "0-1" or "0,2"`)
	}
	var out CPUs
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := core(lo)
		if err != nil {
			return nil, fmt.Errorf("core list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = core(hi); err != nil {
				return nil, fmt.Errorf("core list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("core list %q: range %s runs backwards", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func core(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s == "" || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a core number (want e.g. 0, 0-1 or 0,2)", s)
	}
	if n > maxCPU {
		return 0, fmt.Errorf("core %d is beyond any machine (at most %d)", n, maxCPU)
	}
	return n, nil
}

// String writes the set in the kernel's list syntax; "" for an empty set.
func (c CPUs) String() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// MarshalText writes the list syntax.
func (c CPUs) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads the list syntax; "" is nil.
func (c *CPUs) UnmarshalText(b []byte) error {
	if len(strings.TrimSpace(string(b))) == 0 {
		*c = nil
		return nil
	}
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Contains reports whether core is in the set.
func (c CPUs) Contains(core int) bool {
	_, ok := slices.BinarySearch(c, core)
	return ok
}

// Minus is the cores of c not in o.
func (c CPUs) Minus(o CPUs) CPUs {
	var out CPUs
	for _, x := range c {
		if !o.Contains(x) {
			out = append(out, x)
		}
	}
	return out
}

// Intersect is the cores in both sets.
func (c CPUs) Intersect(o CPUs) CPUs { return c.Minus(c.Minus(o)) }

// Equal reports whether both sets hold the same cores.
func (c CPUs) Equal(o CPUs) bool { return slices.Equal(c, o) }

func (c CPUs) mask() *unix.CPUSet {
	var m unix.CPUSet
	for _, x := range c {
		m.Set(x)
	}
	return &m
}

func fromMask(m *unix.CPUSet) CPUs {
	var out CPUs
	for i := 0; i < len(m)*64 && len(out) < m.Count(); i++ {
		if m.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}

var (
	availableOnce sync.Once
	available     CPUs
)

// Available is the cores msbench may run on: its CPU affinity when it
// started (normally every online core; less under taskset or a
// container's cpuset). Placing a process means choosing among these.
func Available() CPUs {
	availableOnce.Do(func() {
		var err error
		if available, err = Of(os.Getpid()); err != nil || len(available) == 0 {
			available = make(CPUs, runtime.NumCPU())
			for i := range available {
				available[i] = i
			}
		}
	})
	return slices.Clone(available)
}

// The set is captured before anything in msbench can pin itself.
func init() { Available() }

// Check returns an error naming every core of c that this machine does not
// offer msbench, e.g. a study written on a larger machine.
func Check(c CPUs) error {
	if len(c) == 0 {
		return errors.New("no cores")
	}
	avail := Available()
	if missing := c.Minus(avail); len(missing) > 0 {
		return fmt.Errorf("core(s) %s do not exist on this machine (msbench may use cores %s)", missing, avail)
	}
	return nil
}

// Of is the affinity of a thread (a pid is its main thread).
func Of(tid int) (CPUs, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &m); err != nil {
		return nil, fmt.Errorf("CPU affinity of %d: %w", tid, err)
	}
	return fromMask(&m), nil
}

// Current is the calling thread's affinity, which every thread of msbench
// shares unless something placed one apart (the spawner thread does so
// only while it forks).
func Current() CPUs {
	c, err := Of(0)
	if err != nil {
		return Available()
	}
	return c
}

// SetThread sets the calling thread's affinity; the caller must hold its
// OS thread (runtime.LockOSThread). A process forked from it starts there.
func SetThread(c CPUs) error {
	if err := unix.SchedSetaffinity(0, c.mask()); err != nil {
		return fmt.Errorf("set CPU affinity to %s: %w", c, err)
	}
	return nil
}

// OnThread runs fork with the calling thread, which the caller holds
// (runtime.LockOSThread), set to c, and then sets the thread back to where
// the rest of msbench runs: what fork starts begins on c, and msbench's
// threads stay together. Self waits for it, so that no thread is left
// apart.
func OnThread(c CPUs, fork func() error) error {
	selfMu.Lock()
	defer selfMu.Unlock()
	back := Current()
	if err := SetThread(c); err != nil {
		return err
	}
	err := fork()
	if rerr := SetThread(back); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// Process sets the affinity of every thread of pid. Threads created
// meanwhile inherit it from their creator, so the walk is repeated until
// it finds no thread left unplaced.
func Process(pid int, c CPUs) error {
	done := map[int]bool{}
	for range 10 {
		tids, err := threads(pid)
		if err != nil {
			return err
		}
		more := false
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			more = true
			err := unix.SchedSetaffinity(tid, c.mask())
			if err != nil && !errors.Is(err, unix.ESRCH) { // a thread that exited meanwhile
				return fmt.Errorf("set CPU affinity of %d (thread %d) to %s: %w", pid, tid, c, err)
			}
			done[tid] = true
		}
		if !more {
			return nil
		}
	}
	return nil
}

func threads(pid int) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, fmt.Errorf("threads of %d: %w", pid, err)
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// selfMu serialises Self and its restores.
var selfMu sync.Mutex

// Self places every thread of msbench on c and sizes the Go scheduler to
// it, so that the load engine's threads stay on the generator's cores:
// GOMAXPROCS is len(c) + 1. The load loop waits for answers in a raw
// system call that keeps its P (internal/load, loop.sleep), so with
// len(c) Ps on one core nothing else of msbench runs until the loop's
// next wake, up to 20 ms later: a link proxy in msbench then forwards a
// request or an answer only at the loop's wakes, and a 0 ms link added
// 40 ms to every round trip at low load. The extra P lets them run while
// the loop sleeps, on the same cores. restore puts the affinity msbench
// had before back and hands GOMAXPROCS back to the runtime's default.
func Self(c CPUs) (restore func() error, err error) {
	if err := Check(c); err != nil {
		return nil, err
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	before := Current()
	if err := Process(os.Getpid(), c); err != nil {
		_ = Process(os.Getpid(), before)
		return nil, err
	}
	runtime.GOMAXPROCS(len(c) + 1)
	return func() error {
		selfMu.Lock()
		defer selfMu.Unlock()
		err := Process(os.Getpid(), before)
		runtime.SetDefaultGOMAXPROCS()
		return err
	}, nil
}

// Allowed reads Cpus_allowed_list from /proc/PID/status: where the kernel
// lets the process run, whatever placed it there (affinity or cpuset).
func Allowed(pid int) (CPUs, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return Parse(v)
		}
	}
	return nil, fmt.Errorf("/proc/%d/status has no Cpus_allowed_list", pid)
}
