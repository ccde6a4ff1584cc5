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
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/proc/procfs"
	"golang.org/x/sys/unix"
)

// Swept is what a sweep took back from holders that are gone.
type Swept struct {
	Holders   []int // their pids
	Processes int   // processes killed
	Dirs      []string
	Cgroups   []string
	Segments  int      // shared memory segments freed
	Network   []string // network namespaces and interfaces removed
	// Left is what could not be taken back; it stays in its lease for the
	// next sweep.
	Left []error
}

// Empty reports whether there was nothing to take back.
func (s Swept) Empty() bool { return len(s.Holders) == 0 && len(s.Left) == 0 }

func (s Swept) String() string {
	msg := fmt.Sprintf("cleaned up after %d msbench process(es) that died without doing so (pid %s): %d process(es) killed; %d directories, %d cgroups, %d shared memory segments and %d network namespaces or interfaces removed",
		len(s.Holders), joinInts(s.Holders), s.Processes, len(s.Dirs), len(s.Cgroups), s.Segments, len(s.Network))
	if len(s.Left) > 0 {
		msg += fmt.Sprintf("; could not remove: %v", errors.Join(s.Left...))
	}
	return msg
}

// groupWait bounds how long a sweep waits for killed processes to go
// before it removes their directories and cgroups.
const groupWait = 5 * time.Second

// Sweep takes back what every dead holder's lease lists: it kills the
// process groups that still have members, then removes the cgroups and
// directories, and the lease. Leases of live holders are left alone.
func Sweep() Swept { return sweep(leaseDir()) }

func sweep(dir string) Swept {
	var s Swept
	files, _ := filepath.Glob(filepath.Join(dir, prefix+"*.json"))
	for _, file := range files {
		r, err := read(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its holder gave everything back since the listing
		}
		if err != nil {
			s.Left = append(s.Left, err)
			continue
		}
		if r.PID == os.Getpid() || r.Alive() {
			continue
		}
		s.Holders = append(s.Holders, r.PID)
		r.Items = s.reclaim(r)
		if err := write(dir, r); err != nil {
			s.Left = append(s.Left, fmt.Errorf("lease of pid %d: %w", r.PID, err))
		}
	}
	return s
}

func read(file string) (record, error) {
	var r record
	data, err := os.ReadFile(file)
	if err != nil {
		return r, fmt.Errorf("lease %s: %w", file, err) // wraps fs.ErrNotExist for Held
	}
	if err := json.Unmarshal(data, &r); err != nil || r.PID <= 0 {
		return r, fmt.Errorf("lease %s is not one msbench wrote; remove it by hand once what it lists is gone", file)
	}
	return r, nil
}

// alive reports whether the holder of r still runs: same boot, same pid,
// same start time.
func alive(r record) bool {
	if r.Boot != bootID() {
		return false
	}
	st, err := procfs.ReadStat(r.PID)
	return err == nil && st.StartTime == r.Start && !st.Dead()
}

// reclaim kills, then removes, in the order that lets each step succeed;
// it returns the items it could not take back.
func (s *Swept) reclaim(r record) (left []Item) {
	killed := map[int]Item{}
	for _, it := range r.Items {
		if it.Kind != Group {
			continue
		}
		pgid, start, err := parseGroup(it.Value)
		if err != nil {
			s.Left = append(s.Left, err)
			continue
		}
		if n := killGroup(pgid, start); n > 0 {
			s.Processes += n
			killed[pgid] = it
		}
	}
	deadline := time.Now().Add(groupWait)
	for pgid, it := range killed {
		for groupLive(pgid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if groupLive(pgid) {
			s.Left = append(s.Left, fmt.Errorf("process group %d still alive %v after SIGKILL", pgid, groupWait))
			left = append(left, it)
		}
	}
	// Cgroups before directories: a cgroup's processes may still hold
	// files open, but they are gone by now. A namespace goes once
	// unmounted and unused; the interfaces of msbench's namespace (its
	// cables to the namespaces, the bridge) are removed apart, because
	// closing connections may hold a namespace for minutes.
	for _, kind := range []Kind{NetNS, NetDev, SharedMemory, Cgroup, Dir} {
		for _, it := range r.Items {
			if it.Kind != kind {
				continue
			}
			var err error
			switch kind {
			case NetNS:
				err = RemoveNetNS(it.Value)
			case NetDev:
				err = RemoveNetDev(it.Value)
			case SharedMemory:
				err = removeSegment(it.Value)
			case Cgroup:
				err = removeCgroup(it.Value)
			default:
				err = os.RemoveAll(it.Value)
			}
			switch {
			case err != nil:
				s.Left = append(s.Left, err)
				left = append(left, it)
			case kind == NetNS || kind == NetDev:
				s.Network = append(s.Network, it.Value)
			case kind == SharedMemory:
				s.Segments++
			case kind == Cgroup:
				s.Cgroups = append(s.Cgroups, it.Value)
			default:
				s.Dirs = append(s.Dirs, it.Value)
			}
		}
	}
	return left
}

func parseGroup(v string) (pgid int, start uint64, err error) {
	a, b, ok := strings.Cut(v, "@")
	pgid, err1 := strconv.Atoi(a)
	start, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || pgid <= 1 {
		return 0, 0, fmt.Errorf("lease: malformed process group %q", v)
	}
	return pgid, start, nil
}

// killGroup SIGKILLs the live members of process group pgid, unless the id
// now belongs to another group, and returns how many there were. A group
// id stays reserved while any member lives, so members without their
// leader are still the lease's; a leader with another start time means the
// old group died out and the id was reused.
func killGroup(pgid int, leaderStart uint64) int {
	stats, err := procfs.All()
	if err != nil {
		return 0
	}
	members := 0
	for _, st := range stats {
		if st.PID == pgid && st.StartTime != leaderStart {
			return 0
		}
		if st.PGRP == pgid && !st.Dead() {
			members++
		}
	}
	if members > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return members
}

func groupLive(pgid int) bool {
	stats, err := procfs.All()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(stats, func(st procfs.Stat) bool { return st.PGRP == pgid && !st.Dead() })
}

// removeCgroup removes a cgroup and the cgroups below it, deepest first:
// a cgroup directory is removed with rmdir, never by deleting its files.
// The kernel may take a moment to let go of killed tasks, so it retries.
func removeCgroup(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", root, err)
	}
	deadline := time.Now().Add(time.Second)
	for _, d := range slices.Backward(dirs) {
		for {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				return fmt.Errorf("cgroup %s: %w", d, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// removeSegment frees a shared memory segment "ID:KEY" if it still has
// that key (ids are reused) and nothing is attached to it.
func removeSegment(v string) error {
	a, b, _ := strings.Cut(v, ":")
	id, err1 := strconv.Atoi(a)
	key, err2 := strconv.ParseInt(b, 10, 32)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("lease: malformed shared memory segment %q", v)
	}
	var ds unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EIDRM) {
			return nil // gone already
		}
		return fmt.Errorf("shared memory segment %d: %w", id, err)
	}
	if int64(ds.Perm.Key) != key {
		return nil // the id was reused: not ours
	}
	// A server's children may outlive it briefly (PostgreSQL's backends
	// leave its process group and exit when they notice it is gone).
	for deadline := time.Now().Add(groupWait); ds.Nattch > 0; {
		if time.Now().After(deadline) {
			return fmt.Errorf("shared memory segment %d: still attached by %d process(es) after %v", id, ds.Nattch, groupWait)
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err != nil {
			return nil // gone meanwhile
		}
	}
	if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
		return fmt.Errorf("free shared memory segment %d: %w", id, err)
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
