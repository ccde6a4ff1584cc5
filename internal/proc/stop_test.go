package proc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestStopKillsWholeGroup(t *testing.T) {
	tests := []struct {
		name      string
		childMode string
		grace     time.Duration
		minTime   time.Duration // a TERM-ignoring grandchild costs the grace
	}{
		{"grandchild obeys SIGTERM", "sleep", 5 * time.Second, 0},
		{"grandchild ignores SIGTERM", "ignore-term", 300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			p := proctest.StartHelper(t, "parent", "grandchild", pidfile, tt.childMode)
			gpid := readPid(t, pidfile)
			if !procfs.Alive(gpid) {
				t.Fatalf("grandchild %d not running before Stop", gpid)
			}
			start := time.Now()
			if err := p.Stop(context.Background(), tt.grace); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tt.minTime || took > tt.grace+2*time.Second {
				t.Errorf("Stop took %v, want between %v and %v", took, tt.minTime, tt.grace+2*time.Second)
			}
			if procfs.Alive(gpid) {
				t.Errorf("grandchild %d still alive after Stop", gpid)
			}
			// The leader obeys SIGTERM; the group is gone only with its
			// last member, which a TERM-ignoring grandchild makes a kill.
			if st := p.Stopping(); !st.Signalled || st.Killed != (tt.minTime > 0) || st.After < tt.minTime {
				t.Errorf("Stopping() = %+v, want signalled, killed %v, after at least %v", st, tt.minTime > 0, tt.minTime)
			}
			select {
			case <-p.Done():
			default:
				t.Error("Done not closed after Stop")
			}
		})
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	p := proctest.StartHelper(t, "stubborn", "ignore-term")
	const grace = 300 * time.Millisecond
	start := time.Now()
	if err := p.Stop(context.Background(), grace); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < grace {
		t.Errorf("Stop took %v, want at least the grace %v", took, grace)
	}
	assertSignaled(t, p, syscall.SIGKILL)
	if st := p.Stopping(); !st.Signalled || !st.Killed || st.After < grace {
		t.Errorf("Stopping() = %+v, want signalled and killed after at least %v", st, grace)
	}
}

func TestStopCancelledContextKillsAtOnce(t *testing.T) {
	p := proctest.StartHelper(t, "stubborn", "ignore-term")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := p.Stop(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Stop with cancelled ctx took %v", took)
	}
	assertSignaled(t, p, syscall.SIGKILL)
}

func TestStopIsIdempotent(t *testing.T) {
	p := proctest.Start(t, proctest.Spec(t, "quick", "fail"))
	<-p.Done()
	for i := range 2 {
		if err := p.Stop(context.Background(), time.Second); err != nil {
			t.Fatalf("Stop #%d after exit: %v", i+1, err)
		}
	}
	if st := p.Stopping(); st != (proc.Stopping{}) {
		t.Errorf("Stopping() of a process that ended by itself = %+v, want zero", st)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill after exit: %v", err)
	}
	if err := p.Pause(); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Pause after exit = %v, want ErrProcessDone", err)
	}
	var exit *exec.ExitError
	if err := p.ExitErr(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("ExitErr = %v, want exit status 3", err)
	}
}

func TestConcurrentStop(t *testing.T) {
	p := proctest.StartHelper(t, "sleeper", "sleep")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop(context.Background(), time.Second) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop #%d: %v", i, err)
		}
	}
}

func TestKill(t *testing.T) {
	p := proctest.StartHelper(t, "stubborn", "ignore-term")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	assertSignaled(t, p, syscall.SIGKILL)
}

// Crash kills at once, and returns only once the whole group is gone:
// a grandchild that ignores SIGTERM too.
func TestCrashWaitsForTheGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	p := proctest.StartHelper(t, "parent", "grandchild", pidfile, "ignore-term")
	gpid := readPid(t, pidfile)
	if err := p.Crash(); err != nil {
		t.Fatal(err)
	}
	if procfs.Alive(gpid) {
		t.Errorf("grandchild %d still alive after Crash returned", gpid)
	}
	assertSignaled(t, p, syscall.SIGKILL)
	if err := p.Crash(); err != nil {
		t.Errorf("a second Crash: %v", err)
	}
}

// TestPdeathsigKillsChildOfCrashedSupervisor simulates msbench dying
// without cleanup: its child must be killed by the kernel.
func TestPdeathsigKillsChildOfCrashedSupervisor(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	sup := proctest.StartHelper(t, "supervisor", "supervisor", pidfile)
	child := readPid(t, pidfile)
	if !procfs.Alive(child) {
		t.Fatalf("child %d not running", child)
	}
	if err := syscall.Kill(sup.Pid(), syscall.SIGKILL); err != nil { // leader only, not the child's group
		t.Fatal(err)
	}
	waitDead(t, child)
	// The killed supervisor could not give back its lease; the next
	// msbench's sweep does, as here.
	if s := lease.Sweep(); len(s.Left) > 0 {
		t.Errorf("sweep after the kill left: %v", s.Left)
	}
	if items, _ := lease.Held(sup.Pid()); len(items) > 0 {
		t.Errorf("the killed supervisor's lease still lists %v", items)
	}
}

func TestPauseResume(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	p := proctest.StartHelper(t, "parent", "grandchild", pidfile, "sleep")
	gpid := readPid(t, pidfile)
	stopped := func(s procfs.Stat, err error) bool { return err == nil && s.State == 'T' }
	running := func(s procfs.Stat, err error) bool { return err == nil && s.State != 'T' }

	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	// At once, not eventually: a paused service must not answer another
	// request, so Pause returns only once every thread has stopped.
	for _, pid := range []int{p.Pid(), gpid} {
		tasks, err := procfs.Tasks(pid)
		if err != nil || len(tasks) < 2 {
			t.Fatalf("threads of %d: %v %v, want a Go program's several", pid, tasks, err)
		}
		for _, task := range tasks {
			if task.State != 'T' {
				t.Errorf("thread %d of %d is %c right after Pause returned, want T (stopped)", task.PID, pid, task.State)
			}
		}
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.Pid(), "running", running)
	waitState(t, gpid, "running", running)

	// A paused group must still stop within the grace: SIGTERM alone would
	// stay pending until SIGCONT.
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.Pid(), "stopped", stopped)
	start := time.Now()
	if err := p.Stop(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopping a paused group took %v", took)
	}
}

func TestGroupStopAllReverseOrderWithCancelledContext(t *testing.T) {
	var g proc.Group
	modes := []string{"sleep", "ignore-term", "sleep"}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i, mode := range modes {
		p, err := g.Start(context.Background(), proctest.Spec(t, mode, mode))
		if err != nil {
			t.Fatal(err)
		}
		proctest.WaitMarker(t, p, proctest.ReadyMarker)
		wg.Go(func() {
			<-p.Done()
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as after SIGINT with signal.NotifyContext
	if err := g.StopAll(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if want := []int{2, 1, 0}; !slices.Equal(order, want) {
		t.Errorf("stop order %v, want %v", order, want)
	}
	// StopAll keeps the grace despite the cancelled ctx: the TERM-ignoring
	// process was SIGKILLed, the others ended by SIGTERM.
	ps := g.Processes()
	assertSignaled(t, ps[0], syscall.SIGTERM)
	assertSignaled(t, ps[1], syscall.SIGKILL)
}

func assertSignaled(t *testing.T, p *proc.Process, sig syscall.Signal) {
	t.Helper()
	<-p.Done()
	var exit *exec.ExitError
	if !errors.As(p.ExitErr(), &exit) {
		t.Fatalf("%s: ExitErr = %v, want a signal exit", p.Name(), p.ExitErr())
	}
	ws := exit.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != sig {
		t.Errorf("%s: exit %v, want killed by %v", p.Name(), exit, sig)
	}
}
