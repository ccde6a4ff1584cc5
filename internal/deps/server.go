package deps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/proc"
)

// server is what each kind implements. Its methods are called in this
// order: find once, init once, then url, values, and launches for every
// start (the first and each restart).
type server interface {
	// find locates the programs, building them if needed.
	find(ctx context.Context, e *env) error
	// init lays out the private dir for the first start: the initial
	// database, config files, extra ports.
	init(ctx context.Context, e *env) error
	url(e *env) string
	// values are the kind's own placeholders besides addr, host, port and
	// url; keys names them before anything starts, for a study file's
	// placeholders to be checked against.
	values(e *env) map[string]string
	keys() []string
	launches(e *env) []launch
}

// leftovers is implemented by servers whose unclean exit leaves state
// outside the private dir.
type leftovers interface {
	// settle waits, before a start, until what a killed predecessor left
	// can be taken over.
	settle(ctx context.Context, e *env) error
	// release frees it after the last stop, before the private dir goes.
	release(e *env) error
	// lease records it, once the server is ready, for the next msbench to
	// free should this one die too hard to call release.
	lease(e *env)
}

// seeder is implemented by servers whose first start needs a secret in the
// private dir to create an account in a fresh database.
type seeder interface {
	// seeded removes the secret once the first start is ready.
	seeded(e *env) error
}

// launch is one process of a start.
type launch struct {
	spec  proc.Spec
	ready proc.Check // with a real client of the server
	// stop asks for a clean shutdown; zero means SIGTERM, which
	// proc.Process.Stop sends anyway.
	stop syscall.Signal
}

// whenListening is a check with a client that misbehaves while the port is
// still closed (waits before retrying, or logs on msbench's stderr): it is
// called only once addr accepts TCP connections.
func whenListening(addr string, client func(ctx context.Context) error) proc.Check {
	return proc.FuncCheck(func(ctx context.Context) error {
		if err := (proc.TCPCheck{Addr: addr}).Check(ctx); err != nil {
			return err
		}
		return client(ctx)
	})
}

// stopGracefully sends p its shutdown signal and gives it grace in all to
// exit before proc's SIGTERM-then-SIGKILL. It takes no context: it is the
// shutdown path.
func stopGracefully(p *proc.Process, sig syscall.Signal, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	if sig != 0 && p.Signal(sig) == nil {
		// A paused server would not act on it until continued.
		_ = p.Resume()
		select {
		case <-p.Done():
		case <-time.After(grace):
		}
	}
	return p.Stop(context.Background(), max(0, time.Until(deadline)))
}

// runOnce runs a setup program such as initdb to completion under proc's
// supervision, so that a cancelled start leaves nothing behind.
func runOnce(ctx context.Context, s proc.Spec) error {
	p, err := proc.Start(ctx, s)
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", s.Name, errors.Join(ctx.Err(), p.Stop(ctx, 0)))
	}
	// Helpers it forked, if any, go with it.
	stopErr := p.Stop(ctx, stopGrace)
	if err := p.ExitErr(); err != nil {
		return fmt.Errorf("%w\nlog tail:\n%s", err, proc.LogTail(s.LogPath, 20))
	}
	return stopErr
}

// program finds an executable: only in e.binDir when that is set (a list
// of directories as PATH is, the first holding it wins: a standard image
// keeps a kind's programs in several, MariaDB's in /usr/sbin and
// /usr/bin), else in dirs (glob patterns for the packages' own
// directories, which come first because PATH may hold a wrapper of the
// same name; the last match wins so that the highest version of a
// versioned directory is used) and then on PATH. hint says how to get it.
func program(e *env, name, hint string, dirs ...string) (string, error) {
	if e.binDir != "" {
		for _, dir := range filepath.SplitList(e.binDir) {
			if path := filepath.Join(dir, name); isExecutable(path) {
				return path, nil
			}
		}
		return "", fmt.Errorf("%s not found in %s: %s", name, e.binDir, hint)
	}
	for _, pattern := range dirs {
		matches, _ := filepath.Glob(filepath.Join(pattern, name))
		for _, m := range slices.Backward(matches) {
			if isExecutable(m) {
				return m, nil
			}
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%s not found: %s", name, hint)
}

// debian is the hint for a program that a Debian package provides.
func debian(pkg string) string {
	return fmt.Sprintf("install the Debian package %s (scripts/install-deps %s)", pkg, pkg)
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
