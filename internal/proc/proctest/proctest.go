// Package proctest lets tests run helper processes by re-executing the test
// binary, and checks that a test binary leaves no process behind.
//
// A test package wires it up once:
//
//	func TestMain(m *testing.M) { proctest.Main(m, proctest.Modes{"alloc": alloc}) }
//
// and starts helpers with proctest.Start(t, "name", "sleep").
package proctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
	"golang.org/x/sys/unix"
)

const envMode = "MSBENCH_PROCTEST_MODE"

// ReadyMarker is printed by every built-in mode once it is set up; custom
// modes should print it too so that WaitMarker can synchronise on it.
const ReadyMarker = "proctest-ready"

// Mode is the body of a helper process; its result is the exit code.
type Mode func(args []string) int

// Modes maps mode names to helper bodies.
type Modes map[string]Mode

var builtin = Modes{
	// sleep blocks until killed.
	"sleep": func([]string) int {
		fmt.Println(ReadyMarker)
		return Block()
	},
	// ignore-term survives SIGTERM, so only SIGKILL ends it.
	"ignore-term": func([]string) int {
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(ReadyMarker)
		return Block()
	},
	// burn spins one CPU until killed.
	"burn": func([]string) int {
		fmt.Println(ReadyMarker)
		for {
		}
	},
}

// Block sleeps until the process is killed. (A bare select{} would be
// reported by the runtime as a deadlock.)
func Block() int {
	for {
		time.Sleep(time.Hour)
	}
}

// Main runs a helper mode when the binary was started as a helper, and the
// tests otherwise. The test process becomes a child subreaper, so that
// orphaned grandchildren come back to it instead of to an init that may never
// reap them; after the tests any live child is reported (and killed) as a
// leak, which fails the run, and zombies are reaped.
func Main(m *testing.M, modes Modes) {
	if mode, ok := os.LookupEnv(envMode); ok {
		os.Exit(runMode(mode, modes))
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "proctest: subreaper:", err)
	}
	code := m.Run()
	if leaked := killLeaks(); leaked != "" {
		fmt.Fprintln(os.Stderr, "proctest: processes left behind:", leaked)
		if code == 0 {
			code = 1
		}
	}
	reapZombies()
	os.Exit(code)
}

func runMode(mode string, modes Modes) int {
	f, ok := modes[mode]
	if !ok {
		f, ok = builtin[mode]
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "proctest: unknown mode", mode)
		return 2
	}
	return f(os.Args[1:])
}

func killLeaks() string {
	stats, err := procfs.All()
	if err != nil {
		return ""
	}
	var leaked []string
	for _, s := range stats {
		if s.PPID == os.Getpid() && !s.Dead() {
			leaked = append(leaked, fmt.Sprintf("%d(%s)", s.PID, s.Comm))
			_ = syscall.Kill(s.PID, syscall.SIGKILL)
		}
	}
	return strings.Join(leaked, " ")
}

func reapZombies() {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		if err != nil { // ECHILD: nothing left
			return
		}
		if pid == 0 { // children left but none exited yet (just killed)
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Env is the environment entry that makes the test binary run mode.
func Env(mode string) string { return envMode + "=" + mode }

// Command returns an unstarted helper running mode, for helpers that fork
// helpers themselves.
func Command(mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), Env(mode))
	return cmd
}

// Spec describes a helper process running mode with args; its log goes to
// a file in t.TempDir().
func Spec(t testing.TB, name, mode string, args ...string) proc.Spec {
	t.Helper()
	return proc.Spec{
		Name:    name,
		Path:    os.Args[0],
		Args:    args,
		Env:     []string{Env(mode)},
		LogPath: filepath.Join(t.TempDir(), name+".log"),
	}
}

// Start starts s and stops it when the test ends.
func Start(t testing.TB, s proc.Spec) *proc.Process {
	t.Helper()
	p, err := proc.Start(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(context.Background(), time.Second); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return p
}

// StartHelper starts a helper running mode and waits for its ReadyMarker.
func StartHelper(t testing.TB, name, mode string, args ...string) *proc.Process {
	t.Helper()
	p := Start(t, Spec(t, name, mode, args...))
	WaitMarker(t, p, ReadyMarker)
	return p
}

// WaitMarker waits until p's log contains marker.
func WaitMarker(t testing.TB, p *proc.Process, marker string) {
	t.Helper()
	check := proc.FuncCheck(func(context.Context) error {
		b, err := os.ReadFile(p.LogPath())
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), marker) {
			return fmt.Errorf("no %q in log yet", marker)
		}
		return nil
	})
	if err := proc.WaitReady(context.Background(), p, check, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}
