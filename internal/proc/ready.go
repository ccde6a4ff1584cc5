package proc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrExited is wrapped by WaitReady when the process exits before ready.
	ErrExited = errors.New("exited before ready")
	// ErrNotReady is wrapped by WaitReady when the timeout expires.
	ErrNotReady = errors.New("not ready")
)

const (
	readyFirstBackoff = 10 * time.Millisecond
	readyMaxBackoff   = 250 * time.Millisecond
	// A single probe may not eat the whole budget: a server that accepts
	// but hangs must not hide a later, successful attempt.
	readyAttemptTimeout = 2 * time.Second
	readyLogLines       = 20
)

// WaitReady polls check with a short exponential backoff until it succeeds,
// p exits (error wrapping ErrExited, with the log tail), timeout expires
// (error wrapping ErrNotReady, naming the check and its last error) or ctx is
// cancelled. p may be nil to wait for something msbench did not start.
func WaitReady(ctx context.Context, p *Process, check Check, timeout time.Duration) error {
	w := readyWait{p: p, name: checkName(check), timeout: timeout}
	deadline := time.Now().Add(timeout)
	var exited <-chan struct{}
	if p != nil {
		exited = p.Done()
	}
	delay := readyFirstBackoff
	for {
		attemptCtx, cancel := context.WithDeadline(ctx, earliest(deadline, time.Now().Add(readyAttemptTimeout)))
		err := check.Check(attemptCtx)
		cancel()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("wait for %s (%s): %w", w.who(), w.name, err)
		}
		if isClosed(exited) {
			// Checked even on success: the port may belong to someone else.
			return w.exitedErr()
		}
		if err == nil {
			return nil
		}
		// Our own deadline cutting the probe says nothing about the service.
		if w.lastErr == nil || !errors.Is(err, context.DeadlineExceeded) {
			w.lastErr = err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return w.timeoutErr()
		}
		timer := time.NewTimer(min(delay, remaining))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("wait for %s (%s): %w", w.who(), w.name, ctx.Err())
		case <-exited:
			timer.Stop()
			return w.exitedErr()
		case <-timer.C:
		}
		delay = nextBackoff(delay, readyMaxBackoff)
	}
}

type readyWait struct {
	p       *Process
	name    string
	timeout time.Duration
	lastErr error
}

func (w *readyWait) who() string {
	if w.p == nil {
		return "dependency"
	}
	return w.p.Name()
}

func (w *readyWait) exitedErr() error {
	status := "exit status 0"
	if err := w.p.ExitErr(); err != nil {
		status = err.Error()
	}
	return fmt.Errorf("%s %w (%s): %s\nlog tail:\n%s",
		w.who(), ErrExited, w.name, status, LogTail(w.p.LogPath(), readyLogLines))
}

func (w *readyWait) timeoutErr() error {
	tail := ""
	if w.p != nil {
		tail = "\nlog tail:\n" + LogTail(w.p.LogPath(), readyLogLines)
	}
	return fmt.Errorf("%s %w after %v waiting for %s; last error: %v%s",
		w.who(), ErrNotReady, w.timeout, w.name, w.lastErr, tail)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
