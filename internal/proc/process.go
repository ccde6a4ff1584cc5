package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// killWait bounds how long Stop waits for a SIGKILLed group to disappear.
// It is independent of the caller's context so that a cancelled context can
// never leave a process behind.
const killWait = 5 * time.Second

// Process is a started child and the process group it leads.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	pid     int // also the process group id, because of Setpgid

	done    chan struct{}
	exitErr error // written before done is closed

	stopMu sync.Mutex
	// gone is set once the leader is reaped and no live member is left in
	// the group. From then on the id may be reused, so no more signals.
	gone atomic.Bool
	// lease names the group in this process's lease until it is gone.
	lease string
	// stopping is how the Stop that signalled it went; written under
	// stopMu.
	stopping Stopping
}

// Stopping is how a Stop ended a process that was still running: how long
// after SIGTERM its group was gone, and whether it had to be SIGKILLed
// after the grace. A service that promises a clean shutdown is held to it
// by these, and by ExitErr.
type Stopping struct {
	Signalled bool // Stop sent SIGTERM; false if it had ended before
	After     time.Duration
	Killed    bool
}

// Start starts s in its own process group. ctx only bounds the start itself;
// the child's lifetime is ended by Stop, Kill or Group.StopAll.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	cmd, logFile, err := s.command()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	err = startOnSpawner(cmd, s.CPUs, s.NetNS)
	if logFile != nil {
		logFile.Close() // the child holds its own descriptor
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	p := &Process{
		name:    s.Name,
		logPath: s.LogPath,
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		done:    make(chan struct{}),
	}
	// Recorded so that the next msbench can kill what is left of the group
	// (grandchildren do not get the parent-death signal) if this one dies
	// too hard to stop it.
	if st, err := procfs.ReadStat(p.pid); err == nil {
		p.lease = lease.GroupValue(p.pid, st.StartTime)
		lease.Take(lease.Group, p.lease)
	}
	go p.wait()
	return p, nil
}

func (p *Process) wait() {
	if err := p.cmd.Wait(); err != nil {
		p.exitErr = fmt.Errorf("%s: %w", p.name, err)
	}
	close(p.done)
	// A group that went with its leader needs no Stop to be given back.
	p.finished()
}

// Pid is the pid of the leader, which is also the process group id.
func (p *Process) Pid() int { return p.pid }

// Name is Spec.Name.
func (p *Process) Name() string { return p.name }

// LogPath is Spec.LogPath.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed when the leader has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr is the leader's exit error (an *exec.ExitError for a non-zero
// status or a signal) once Done is closed; nil before that and on success.
func (p *Process) ExitErr() error {
	select {
	case <-p.done:
		return p.exitErr
	default:
		return nil
	}
}

// Signal sends sig to the whole process group. It returns an error wrapping
// os.ErrProcessDone when nothing is left to signal.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := p.signalGroup(sig); err != nil {
		return fmt.Errorf("signal %s %v: %w", p.name, sig, err)
	}
	return nil
}

// Pause freezes the group with SIGSTOP (fault injection: a hung service)
// and returns once every thread of it has stopped. The signal is delivered
// to each thread as it next runs, so on a busy machine a thread may still
// answer a request sent right after kill(2) returned (an apitest saw a
// "hung" store answer 6 ms later).
func (p *Process) Pause() error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopWithin)
	defer cancel()
	if err := poll(ctx, 100*time.Microsecond, 10*time.Millisecond, nil, func() bool { return groupStopped(p.pid) }); err != nil {
		return fmt.Errorf("pause %s: not every thread stopped within %v (one in uninterruptible sleep?)", p.name, stopWithin)
	}
	return nil
}

// stopWithin bounds the wait for a paused group's threads to stop.
const stopWithin = 5 * time.Second

// Resume continues a paused group with SIGCONT.
func (p *Process) Resume() error { return p.Signal(syscall.SIGCONT) }

// Kill sends SIGKILL to the group without waiting. Killing a group that is
// already gone is not an error.
func (p *Process) Kill() error {
	if err := p.signalGroup(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	return nil
}

func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.gone.Load() {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Stop sends SIGTERM to the group, SIGKILL after grace, and returns once the
// leader is reaped and no live member is left. A cancelled ctx cuts the grace
// short; the wait after SIGKILL is bounded internally, not by ctx. Stop is
// idempotent and returns nil for a process that already exited. Members that
// moved themselves to another process group (daemonizing) are not reached.
func (p *Process) Stop(ctx context.Context, grace time.Duration) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.finished() {
		return nil
	}
	began := time.Now()
	if err := p.signalGroup(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	// A paused group would not act on SIGTERM until continued.
	_ = p.signalGroup(syscall.SIGCONT)

	graceCtx, cancel := context.WithTimeout(ctx, grace)
	err := p.waitGone(graceCtx)
	cancel()
	if err == nil {
		p.stopping = Stopping{Signalled: true, After: time.Since(began)}
		return nil
	}
	err = p.killGroup("stop")
	p.stopping = Stopping{Signalled: true, After: time.Since(began), Killed: true}
	return err
}

// Stopping is how the last Stop went.
func (p *Process) Stopping() Stopping {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	return p.stopping
}

// Crash SIGKILLs the group, as a crash would end it, and returns once the
// leader is reaped and no live member is left (its port free, say).
func (p *Process) Crash() error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.finished() {
		return nil
	}
	return p.killGroup("crash")
}

// killGroup SIGKILLs the group and waits, bounded by killWait, until it
// is gone; the caller holds stopMu.
func (p *Process) killGroup(what string) error {
	if err := p.signalGroup(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s %s: %w", what, p.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	if err := p.waitGone(ctx); err != nil {
		return fmt.Errorf("%s %s: group %d still alive %v after SIGKILL", what, p.name, p.pid, killWait)
	}
	return nil
}

// finished reports whether the leader is reaped and the group has no live
// member left.
func (p *Process) finished() bool {
	if p.gone.Load() {
		return true
	}
	select {
	case <-p.done:
	default:
		return false
	}
	if groupAlive(p.pid) {
		return false
	}
	if !p.gone.Swap(true) && p.lease != "" {
		lease.Release(lease.Group, p.lease)
	}
	return true
}

// waitGone polls finished until it holds or ctx ends. Polling is needed
// because grandchildren are not our children: nothing notifies us of their
// exit.
func (p *Process) waitGone(ctx context.Context) error {
	return poll(ctx, 2*time.Millisecond, 50*time.Millisecond, p.done, func() bool {
		return p.finished()
	})
}
