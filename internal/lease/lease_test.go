package lease

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// useDir points this process's lease at dir for one test.
func useDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	holder.mu.Lock()
	holder.dir, holder.ready, holder.self = dir, false, record{}
	holder.mu.Unlock()
	t.Cleanup(func() {
		holder.mu.Lock()
		holder.dir, holder.ready, holder.self = "", false, record{}
		holder.mu.Unlock()
	})
	return dir
}

func TestTakeAndReleaseKeepTheFileJustWhileSomethingIsHeld(t *testing.T) {
	dir := useDir(t)
	file := path(dir, os.Getpid())
	Take(Dir, "/tmp/a")
	Take(Cgroup, "/sys/fs/cgroup/x")
	r, err := read(file)
	if err != nil {
		t.Fatal(err)
	}
	if r.PID != os.Getpid() || r.Start == 0 || r.Boot == "" || len(r.Items) != 2 {
		t.Fatalf("lease %+v", r)
	}
	Release(Dir, "/tmp/a")
	Release(Dir, "/tmp/never-taken")
	if r, _ = read(file); len(r.Items) != 1 || r.Items[0] != (Item{Cgroup, "/sys/fs/cgroup/x"}) {
		t.Fatalf("after release: %+v", r.Items)
	}
	Release(Cgroup, "/sys/fs/cgroup/x")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("lease still there with nothing held: %v", err)
	}
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// startGroup starts a shell in a process group of its own that forks a
// grandchild, as a server's wrapper would, and returns the group's lease
// value and its pid. The shell execs its last command so that the group
// settles at exactly two members: without exec, whether a shell forks for
// its last command is the shell's choice, and a sweep could find a third
// member that was not there when the test counted.
func startGroup(t *testing.T) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 60 & exec sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	st, err := procfs.ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return GroupValue(cmd.Process.Pid, st.StartTime), cmd.Process.Pid
}

func countGroup(t *testing.T, pgid int) int {
	t.Helper()
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, st := range stats {
		if st.PGRP == pgid && !st.Dead() {
			n++
		}
	}
	return n
}

func writeLease(t *testing.T, dir string, r record) string {
	t.Helper()
	data, _ := json.Marshal(r)
	file := path(dir, r.PID)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestSweepTakesBackWhatADeadHolderLeft(t *testing.T) {
	dir := useDir(t)
	group, pgid := startGroup(t)
	data := filepath.Join(t.TempDir(), "msbench-postgres-1")
	cgroup := filepath.Join(t.TempDir(), "msbench-run", "svc") // rmdir-able like a cgroup
	for _, d := range []string{filepath.Join(data, "base"), cgroup} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "base", "PG_VERSION"), []byte("15"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	file := writeLease(t, dir, record{Process: Process{PID: dead, Start: 1, Boot: bootID()}, Items: []Item{
		{Group, group}, {Dir, data}, {Cgroup, filepath.Dir(cgroup)},
	}})

	members := 0
	for members < 2 { // the shell (exec'd into sleep) and its background child
		members = countGroup(t, pgid)
	}
	s := sweep(dir)
	if len(s.Left) > 0 || len(s.Holders) != 1 || s.Holders[0] != dead || s.Processes != members || len(s.Dirs) != 1 || len(s.Cgroups) != 1 {
		t.Fatalf("swept %+v", s)
	}
	if groupLive(pgid) {
		t.Fatal("the dead holder's process group is still alive")
	}
	for _, p := range []string{data, filepath.Dir(cgroup), file} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", p, err)
		}
	}
	if again := sweep(dir); !again.Empty() {
		t.Fatalf("a second sweep found %+v", again)
	}
}

func TestSweepLeavesLiveHoldersAndReusedGroupsAlone(t *testing.T) {
	dir := useDir(t)
	group, pgid := startGroup(t)
	keep := t.TempDir()
	self, err := procfs.ReadStat(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	// The parent of this test is alive: its lease must stand.
	live := writeLease(t, dir, record{Process: Process{PID: os.Getppid(), Start: self.StartTime, Boot: bootID()}, Items: []Item{{Group, group}, {Dir, keep}}})
	// A dead holder whose group id now belongs to a process started later.
	reused := GroupValue(pgid, 1)
	writeLease(t, dir, record{Process: Process{PID: deadPID(t), Start: 1, Boot: bootID()}, Items: []Item{{Group, reused}}})

	s := sweep(dir)
	if s.Processes != 0 || len(s.Holders) != 1 {
		t.Fatalf("swept %+v", s)
	}
	time.Sleep(20 * time.Millisecond)
	if !groupLive(pgid) {
		t.Fatal("a group that is not the dead holder's was killed")
	}
	for _, p := range []string{live, keep} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a live holder's %s was removed: %v", p, err)
		}
	}
}

func TestSweepReportsALeaseItCannotRead(t *testing.T) {
	dir := useDir(t)
	if err := os.WriteFile(filepath.Join(dir, prefix+"99.json"), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := sweep(dir); len(s.Left) != 1 || len(s.Holders) != 0 {
		t.Fatalf("swept %+v", s)
	}
}
