// Package lease records what a running msbench holds on the machine that
// would outlive it if it died without cleaning up (SIGKILL, a crash, an
// out-of-memory kill): the process groups it started, its private
// directories and its cgroups. The record is a file of its own in the
// temporary directory, kept up to date as things are taken and given back,
// and removed once nothing is held. Sweep, run when msbench starts, takes
// back what holders that are gone left behind.
//
// Children die with msbench through their parent-death signal; the lease
// is what catches the rest: grandchildren in a child's process group,
// directories and cgroups, which no signal removes.
package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// Kind is what a held item is.
type Kind string

const (
	// Group is a process group: its id and the start time of its leader,
	// which together tell it from a later group that reuses the id.
	Group Kind = "group"
	// Dir is a directory removed with everything in it.
	Dir Kind = "dir"
	// Cgroup is a cgroup directory, removed (with the cgroups below it)
	// once its processes are gone.
	Cgroup Kind = "cgroup"
	// SharedMemory is a System V shared memory segment, "ID:KEY", which
	// outlives every process (PostgreSQL's), freed once none is attached.
	SharedMemory Kind = "shm"
	// NetNS is a named network namespace (an emulated host), its name
	// under /run/netns; it lives while mounted there or used by a process.
	NetNS Kind = "netns"
	// NetDev is a network interface in msbench's namespace (the emulated
	// hosts' bridge), which outlives every process.
	NetDev Kind = "netdev"
)

// Item is one thing held.
type Item struct {
	Kind  Kind   `json:"kind"`
	Value string `json:"value"`
}

// Process names a process across pid reuse and reboots, as a lease
// records its holder.
type Process struct {
	PID int `json:"pid"`
	// Start is its start time in clock ticks after boot, so that a new
	// process that reuses the pid is not taken for it.
	Start uint64 `json:"start"`
	Boot  string `json:"boot_id"`
}

// Self is the calling process.
func Self() Process {
	p := Process{PID: os.Getpid(), Boot: bootID()}
	if st, err := procfs.ReadStat(p.PID); err == nil {
		p.Start = st.StartTime
	}
	return p
}

// Alive reports whether p still runs: same boot, same pid, same start
// time, not a zombie.
func (p Process) Alive() bool {
	if p.Boot != bootID() {
		return false
	}
	st, err := procfs.ReadStat(p.PID)
	return err == nil && st.StartTime == p.Start && !st.Dead()
}

// record is the content of a lease file.
type record struct {
	Process
	Items []Item `json:"items"`
}

const prefix = "msbench-lease-"

// holder is this process's lease.
var holder struct {
	mu    sync.Mutex
	dir   string // where lease files live; the temp dir unless a test says
	self  record
	ready bool
}

// Take records that this process holds the item until Release; taking
// what is already held changes nothing.
func Take(kind Kind, value string) {
	change(func(items []Item) []Item {
		if slices.Contains(items, Item{kind, value}) {
			return items
		}
		return append(items, Item{kind, value})
	})
}

// Release records that the item is given back.
func Release(kind Kind, value string) {
	change(func(items []Item) []Item {
		if i := slices.Index(items, Item{kind, value}); i >= 0 {
			return slices.Delete(items, i, i+1)
		}
		return items
	})
}

// GroupValue is how a process group is named in a lease.
func GroupValue(pgid int, leaderStart uint64) string {
	return strconv.Itoa(pgid) + "@" + strconv.FormatUint(leaderStart, 10)
}

// change applies edit to the held items and writes the lease file, or
// removes it when nothing is held. A lease that cannot be written costs
// only the clean-up after a hard death, never the run: it is reported once
// on stderr and the run goes on.
func change(edit func([]Item) []Item) {
	holder.mu.Lock()
	defer holder.mu.Unlock()
	if !holder.ready {
		holder.ready = true
		if holder.dir == "" {
			holder.dir = os.TempDir()
		}
		holder.self = record{Process: Self()}
	}
	holder.self.Items = edit(holder.self.Items)
	if err := write(holder.dir, holder.self); err != nil && !warned {
		warned = true
		fmt.Fprintf(os.Stderr, "msbench: cannot record what this run holds (%v): a hard kill would leave it behind until cleaned by hand\n", err)
	}
}

var warned bool

func path(dir string, pid int) string {
	return filepath.Join(dir, prefix+strconv.Itoa(pid)+".json")
}

func write(dir string, r record) error {
	p := path(dir, r.PID)
	if len(r.Items) == 0 {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// The temporary name does not match the lease pattern, so a sweep
	// never reads half a file.
	tmp := filepath.Join(dir, "."+prefix+strconv.Itoa(r.PID)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// Held lists what the msbench process pid holds by its lease: nothing when
// it has no lease file.
func Held(pid int) ([]Item, error) {
	r, err := read(path(leaseDir(), pid))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r.Items, err
}

// ParseGroup reads a group's lease value back.
func ParseGroup(v string) (pgid int, leaderStart uint64, err error) { return parseGroup(v) }

// leaseDir is where lease files live: the temporary directory, unless a
// test says otherwise.
func leaseDir() string {
	holder.mu.Lock()
	defer holder.mu.Unlock()
	if holder.dir == "" {
		return os.TempDir()
	}
	return holder.dir
}
