package cluster

import (
	"bufio"
	"context"
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

	"golang.org/x/sys/unix"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// ErrNoCluster says a state directory holds no cluster.
var ErrNoCluster = errors.New("no cluster")

// Down stops the cluster whose state is in stateDir, ready or half
// started by an Up that died, and undoes what its Up did: its processes
// and the pods' (shims, containers), mounts, network namespace (and the
// veth pair and iptables rules inside it), kubepods cgroups, the system
// paths the components created, the sysctls the kubelet rewrote, and the
// state directory. It returns ErrNoCluster when there is none. What could
// not be undone is in the error, and the state stays for another Down.
func Down(ctx context.Context, stateDir string) error {
	l, err := stateLayout(stateDir)
	if err != nil {
		return err
	}
	// A claim without a cluster (an Up that failed before its first
	// step) is released too.
	err = takeDown(ctx, l)
	if err != nil && !errors.Is(err, ErrNoCluster) {
		return err
	}
	if rerr := releaseMachine(l.dir); rerr != nil {
		return rerr
	}
	return err
}

// takeDown is Down but for the machine's claim, which the caller holds or
// releases.
func takeDown(ctx context.Context, l layout) error {
	stateDir := l.dir
	st, err := readState(l)
	if noState(err) {
		return fmt.Errorf("%w in %s", ErrNoCluster, stateDir)
	}
	if err != nil {
		return err
	}
	if !st.Ready && st.Owner.PID != os.Getpid() && st.Owner.alive() {
		return fmt.Errorf("the cluster in %s is still being started by pid %d: stop that first", stateDir, st.Owner.PID)
	}
	var errs []error
	if err := stopProcesses(ctx, st); err != nil {
		errs = append(errs, err)
	}
	if err := unmountUnder(mountRoots(l, st)...); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat(netnsPath(st.Netns)); err == nil {
		if err := run(ctx, "ip", "netns", "delete", st.Netns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := releaseNetnsDir(st); err != nil {
		errs = append(errs, err)
	}
	for _, cg := range st.Cgroups {
		if err := removeCgroup(cg); err != nil {
			errs = append(errs, err)
		}
	}
	if err := writeSysctls(st.Sysctls); err != nil {
		errs = append(errs, err)
	}
	for _, p := range st.Created {
		if p == netnsDir {
			continue // released above, with its mount
		}
		if err := removeTree(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("taking down the cluster in %s: %w", stateDir, errors.Join(errs...))
	}
	return removeTree(stateDir)
}

// SweepDead takes down the cluster in stateDir if its Up died before the
// cluster was ready (a SIGKILL, a crash), and reports whether it did. A
// ready cluster, or one still starting, is left alone.
func SweepDead(ctx context.Context, stateDir string) (bool, error) {
	l, err := stateLayout(stateDir)
	if err != nil {
		return false, err
	}
	st, err := readState(l)
	if noState(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.Ready || st.Owner.alive() {
		return false, nil
	}
	return true, Down(ctx, stateDir)
}

// stopProcesses kills the daemons and every process left in the
// cluster's namespace (containerd's shims) or its pods' cgroups (the
// containers, which have namespaces of their own). No one is asked to
// stop politely: the cluster's data goes with it, so a graceful shutdown
// (the API server's takes seconds) would save nothing.
func stopProcesses(ctx context.Context, st state) error {
	var left []int
	gone := func() bool {
		left = clusterPIDs(st)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(left) == 0
	}
	if !waitUntil(ctx, 30*time.Second, gone) {
		return fmt.Errorf("processes of the cluster still alive after SIGKILL: %v", left)
	}
	return nil
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// clusterPIDs lists the live processes of the cluster: its daemons, those
// in its namespace, and those in its kubepods cgroups.
func clusterPIDs(st state) []int {
	var pids []int
	for _, p := range st.Processes {
		if p.alive() {
			pids = append(pids, p.PID)
		}
	}
	ns, nsErr := netnsInode(netnsPath(st.Netns))
	all, _ := procfs.All()
	for _, p := range all {
		if p.PID == os.Getpid() || p.Dead() {
			continue
		}
		// A daemon's session is its process group: the children it forks
		// (socat's, one per connection) are in it.
		if slices.ContainsFunc(st.Processes, func(d process) bool { return p.PGRP == d.PID && p.StartTime >= d.Start }) {
			pids = append(pids, p.PID)
			continue
		}
		if ino, err := netnsInode("/proc/" + strconv.Itoa(p.PID) + "/ns/net"); nsErr == nil && err == nil && ino == ns {
			pids = append(pids, p.PID)
		}
	}
	for _, cg := range st.Cgroups {
		filepath.WalkDir(cg, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	slices.Sort(pids)
	return slices.Compact(pids)
}

// mountRoots are the trees whose mounts are the cluster's: its state
// directory, and containerd's hard-coded runtime state (all of
// /run/containerd if the cluster created it, else its k8s.io parts).
func mountRoots(l layout, st state) []string {
	roots := []string{l.dir}
	if slices.Contains(st.Created, "/run/containerd") {
		return append(roots, "/run/containerd")
	}
	return append(roots, "/run/containerd/io.containerd.runtime.v2.task/k8s.io", "/run/containerd/io.containerd.grpc.v1.cri")
}

// mountPoints lists the mount points at or under any of roots, deepest
// first.
func mountPoints(roots ...string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		// Mount points are compared as mountinfo escapes them (\040 for
		// a space): Up refuses a state directory that has such
		// characters, and nothing the components mount under it does.
		mp := fields[4]
		for _, r := range roots {
			if mp == r || strings.HasPrefix(mp, r+"/") {
				out = append(out, mp)
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(out), nil
}

func isMountPoint(path string) bool {
	mps, err := mountPoints(path)
	return err == nil && slices.Contains(mps, path)
}

// unmountUnder detaches every mount at or under roots; a mount stacked
// several times is detached until none is left.
func unmountUnder(roots ...string) error {
	for i := 0; i < 10; i++ {
		mps, err := mountPoints(roots...)
		if err != nil {
			return fmt.Errorf("list mounts: %w", err)
		}
		if len(mps) == 0 {
			return nil
		}
		for _, mp := range mps {
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("unmount %s: %w", mp, err)
			}
		}
	}
	mps, _ := mountPoints(roots...)
	return fmt.Errorf("mounts left: %v", mps)
}

// releaseNetnsDir undoes what "ip netns add" did to /run/netns (a bind
// mount of itself, and the directory) if Up found neither and no other
// namespace is named there now.
func releaseNetnsDir(st state) error {
	if entries, err := os.ReadDir(netnsDir); err != nil || len(entries) > 0 {
		return nil
	}
	if !st.NetnsMounted && isMountPoint(netnsDir) {
		if err := unix.Unmount(netnsDir, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %s: %w", netnsDir, err)
		}
	}
	if slices.Contains(st.Created, netnsDir) && !isMountPoint(netnsDir) {
		if err := os.Remove(netnsDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", netnsDir, err)
		}
	}
	return nil
}

// removeCgroup removes a cgroup and those below it, deepest first (a
// cgroup directory is removed with rmdir, never its files).
func removeCgroup(root string) error {
	var dirs []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		var err error
		// A cgroup whose last process has just died stays busy a moment.
		for try := 0; try < 50; try++ {
			if err = unix.Rmdir(dirs[i]); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("remove cgroup %s: %w", dirs[i], err)
		}
	}
	return nil
}

// removeTree removes a directory tree, after making sure nothing is
// mounted inside it: RemoveAll would otherwise delete through the mount.
func removeTree(path string) error {
	if mps, err := mountPoints(path); err != nil || len(mps) > 0 {
		return fmt.Errorf("not removing %s: mounts inside it (%v) %v", path, mps, err)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
