package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// These tests run the msbench binary, as a user would, and stop it the ways
// a user or the machine can: signals from a terminal, a closed pipe,
// SIGKILL. Whatever the way, nothing it held may be left once it (or, after
// SIGKILL, the next msbench) is done.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func msbenchBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "msbench-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "msbench")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("build msbench: %v\n%s", binErr, binPath)
	}
	return binPath
}

// TestMain gives this package's msbench runs a temporary directory of their
// own: every msbench sweeps what dead ones left in the temporary directory
// and says so, and tests of other packages that kill an msbench on purpose
// must not show up here as a line nobody expected.
func TestMain(m *testing.M) {
	removeDeadCmdtestDirs()
	tmp, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", cmdtestPrefix, os.Getpid()))
	if err == nil {
		// Servers that run as their own users must reach their dirs below.
		err = os.Chmod(tmp, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if err := kubeCluster.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster down:", err)
		code = 1
	}
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

const cmdtestPrefix = "msbench-cmdtest-"

// removeDeadCmdtestDirs removes the directories of earlier runs of these
// tests whose process is gone: one killed by go test's timeout ran no
// cleanup. They are not leased, since these tests' own msbench runs must
// not sweep other packages' leases; the pid in the name says whose they are.
func removeDeadCmdtestDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), cmdtestPrefix+"*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), cmdtestPrefix), "-")
		if n, err := strconv.Atoi(pid); err != nil || !procfs.Alive(n) {
			os.RemoveAll(d)
		}
	}
}

// lines collects what a process writes, line by line, and lets a test wait
// for one.
type lines struct {
	mu   sync.Mutex
	buf  []string
	more chan struct{}
	eof  chan struct{} // closed when the writer is gone
}

func watch(r io.Reader) *lines {
	l := &lines{more: make(chan struct{}, 1), eof: make(chan struct{})}
	go func() {
		defer close(l.eof)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			l.buf = append(l.buf, sc.Text())
			l.mu.Unlock()
			select {
			case l.more <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.buf, "\n")
}

func (l *lines) waitFor(t *testing.T, substr string, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for !strings.Contains(l.String(), substr) {
		select {
		case <-l.more:
		case <-l.eof:
			if !strings.Contains(l.String(), substr) {
				t.Fatalf("msbench ended without %q; its output:\n%s", substr, l)
			}
		case <-deadline:
			t.Fatalf("no %q within %v; output so far:\n%s", substr, limit, l)
		}
	}
}

// held reads what the msbench with this pid holds, failing when it holds
// nothing: then the test would prove nothing.
func held(t *testing.T, pid int) []lease.Item {
	t.Helper()
	items, err := lease.Held(pid)
	if err != nil || len(items) == 0 {
		t.Fatalf("lease of msbench %d: %v, %v", pid, items, err)
	}
	return items
}

// assertReleased checks that nothing in items is left: no live member of a
// process group, no directory or cgroup, no process anywhere that mentions
// a leased directory in its command line (a server that escaped its
// group), and no lease file.
func assertReleased(t *testing.T, pid int, items []lease.Item) {
	t.Helper()
	if left, err := lease.Held(pid); err != nil || len(left) > 0 {
		t.Errorf("the lease of msbench %d still lists %v (%v)", pid, left, err)
	}
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, it := range items {
		switch it.Kind {
		case lease.Group:
			pgid, _, err := lease.ParseGroup(it.Value)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range stats {
				if st.PGRP == pgid && !st.Dead() {
					t.Errorf("process %d (%s) of group %d is still running", st.PID, st.Comm, pgid)
				}
			}
		case lease.SharedMemory:
			id, key, _ := strings.Cut(it.Value, ":")
			table, _ := os.ReadFile("/proc/sysvipc/shm")
			for _, line := range strings.Split(string(table), "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[0] == key && f[1] == id {
					t.Errorf("shared memory segment %s is still there", it.Value)
				}
			}
		case lease.NetNS:
			if _, err := os.Stat(filepath.Join(lease.NetNSDir, it.Value)); !os.IsNotExist(err) {
				t.Errorf("network namespace %s is still there", it.Value)
			}
		case lease.NetDev:
			if _, err := os.Stat(filepath.Join("/sys/class/net", it.Value)); !os.IsNotExist(err) {
				t.Errorf("network interface %s is still there", it.Value)
			}
		default:
			dirs = append(dirs, it.Value)
			if _, err := os.Stat(it.Value); !os.IsNotExist(err) {
				t.Errorf("%s %s is still there", it.Kind, it.Value)
			}
		}
	}
	for _, st := range stats {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(st.PID), "cmdline"))
		for _, d := range dirs {
			if !st.Dead() && bytes.Contains(cmdline, []byte(d)) {
				t.Errorf("process %d (%s) still runs from %s", st.PID, st.Comm, d)
			}
		}
	}
}

// start runs msbench with args, its stderr watched (and its stdout too,
// when they share a pipe).
func start(t *testing.T, stdout io.Writer, args ...string) (*exec.Cmd, *lines, *os.File) {
	t.Helper()
	cmd := exec.Command(msbenchBinary(t), args...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	cmd.Stdout = stdout
	if stdout == nil {
		cmd.Stdout = w
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); r.Close() })
	return cmd, watch(r), r
}

// exitWithin waits for cmd and returns its exit code.
func exitWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("msbench did not end within %v", limit)
	}
	return cmd.ProcessState.ExitCode(), time.Since(began)
}

// The test: SIGKILL of msbench deps up, then the next msbench start
// leaves no process, port, data directory or cgroup of the dead run.
func TestHardKillIsCleanedAtNextStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four database servers")
	}
	var stdout bytes.Buffer
	var mu sync.Mutex
	cmd, stderr, _ := start(t, writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return stdout.Write(p)
	}), "deps", "up", "rabbitmq", "mariadb", "postgres", "redis", "--root", "../..")
	stderr.waitFor(t, "running;", 3*time.Minute)
	items := held(t, cmd.Process.Pid)
	t.Logf("held: %v", items)
	// stdout is a pipe of its own, copied apart from stderr: wait for it.
	var addrs []string
	for deadline := time.Now().Add(10 * time.Second); len(addrs) < 4 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		addrs = addrs[:0]
		for _, line := range strings.Split(stdout.String(), "\n") {
			if f := strings.Fields(line); len(f) >= 5 && strings.HasSuffix(line, "s") {
				addrs = append(addrs, f[2])
			}
		}
		mu.Unlock()
	}
	if len(addrs) != 4 {
		mu.Lock()
		t.Fatalf("want 4 servers, got:\n%s", stdout.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	next := exec.Command(msbenchBinary(t), "clean")
	out, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("msbench clean: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`\(pid [0-9, ]*\b` + strconv.Itoa(cmd.Process.Pid) + `\b`).Match(out) {
		t.Errorf("the next start did not say it cleaned up after %d:\n%s", cmd.Process.Pid, out)
	}
	assertReleased(t, cmd.Process.Pid, items)
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("port of the dead run %s is still taken: %v", addr, err)
			continue
		}
		l.Close()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Closing the terminal, a reader that goes away and SIGTERM stop a run
// like Ctrl-C: everything stopped and removed (the emulated host's
// namespace and bridge among it), what was measured kept,
// the resume hint printed where it can be; a SIGKILLed run is cleaned by
// the next start.
func TestSignalsDuringRunLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study with PostgreSQL")
	}
	tests := []struct {
		name   string
		sig    syscall.Signal
		closed bool // the output pipe is closed instead of a signal sent
		hint   bool // the resume hint can be read
	}{
		{"SIGHUP", syscall.SIGHUP, false, true},
		{"SIGTERM", syscall.SIGTERM, false, true},
		{"SIGINT", syscall.SIGINT, false, true},
		{"SIGPIPE", 0, true, false},
		{"SIGKILL", syscall.SIGKILL, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := t.TempDir()
			cmd, out, pipe := start(t, nil, "run", "testdata/hold.yaml", "--root", "../..", "--results", results)
			out.waitFor(t, "ready in", 3*time.Minute)
			time.Sleep(time.Second) // into the load
			items := held(t, cmd.Process.Pid)
			t.Logf("held: %v", items)
			if !slices.ContainsFunc(items, func(it lease.Item) bool { return it.Kind == lease.NetNS }) {
				t.Fatalf("the run holds no network namespace, so its clean-up is not tested: %v", items)
			}
			if tt.closed {
				pipe.Close() // msbench's next progress line meets a closed pipe
			} else if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			code, took := exitWithin(t, cmd, 30*time.Second)
			t.Logf("%s: exit %d after %v", tt.name, code, took)
			if tt.sig == syscall.SIGKILL {
				if out, err := exec.Command(msbenchBinary(t), "clean").CombinedOutput(); err != nil {
					t.Fatalf("msbench clean: %v\n%s", err, out)
				}
			} else if code != 130 {
				t.Errorf("exit %d, want 130 (interrupted); output:\n%s", code, out)
			}
			if tt.hint {
				// msbench has exited; what it wrote last may still be in
				// the pipe.
				select {
				case <-out.eof:
				case <-time.After(5 * time.Second):
				}
			}
			if tt.hint && !strings.Contains(out.String(), "--resume") {
				t.Errorf("no resume hint in:\n%s", out)
			}
			assertReleased(t, cmd.Process.Pid, items)
			runs, _ := filepath.Glob(filepath.Join(results, "hold-*", "state.json"))
			if len(runs) != 1 {
				t.Errorf("the run directory lost its state: %v", runs)
			}
		})
	}
}

// SIGPIPE alone stops nothing: a write to a socket whose peer went away
// raises it too (a link proxy's, when a broker restarts), and only a
// reader of msbench's own output that went away is an interruption, told
// by the write's EPIPE (the SIGPIPE case of TestSignalsDuringRunLeaveNothing).
func TestSigpipeAloneIsNoInterruption(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	cmd := exec.Command(msbenchBinary(t), "load", "-q", "-r", "50", "-d", "2s", srv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGPIPE); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("msbench load after a SIGPIPE: %v\n%s", err, stderr.String())
	}
}
