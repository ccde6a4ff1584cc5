package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/msbench/msbench/internal/placement"
	"golang.org/x/sys/unix"
)

// The kernel delivers Pdeathsig when the *thread* that forked the child
// exits, not when the process does. The Go runtime may retire an idle thread
// (e.g. one that a goroutine locked and exited without unlocking), which would
// SIGKILL healthy children mid-run. So every fork happens on one goroutine
// that locks its OS thread and never returns: that thread lives exactly as
// long as msbench does. The cost is one parked thread.
//
// A child inherits the affinity of the thread that forked it, so the same
// thread also places children: it sets its own affinity to the child's
// cores just before the fork (Go cannot do so between fork and exec) and
// back right after, and the child runs nowhere else from its first
// instruction. The runtime never clones new threads from a thread locked
// this way (it hands that to its template thread), so the setting never
// spreads to other threads.
//
// A child's network namespace is its forking thread's too, so the same
// thread enters a host's namespace for the fork and leaves it at once.

type spawnRequest struct {
	cmd   *exec.Cmd
	cpus  placement.CPUs // nil: every core msbench may use
	netns string         // a network namespace's file; empty: msbench's own
	done  chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

func spawnLoop() {
	runtime.LockOSThread() // never unlocked on purpose, see above
	for req := range spawnCh {
		cpus := req.cpus
		if cpus == nil {
			// Not where msbench itself may be placed: the services'
			// cores are not the generator's.
			cpus = placement.Available()
		}
		req.done <- placement.OnThread(cpus, func() error { return inNetNS(req.netns, req.cmd.Start) })
	}
}

// startOnSpawner runs cmd.Start on the dedicated forking thread. It does not
// take a context: once the request is queued the fork must be allowed to
// finish, otherwise a started child could be lost without a Wait.
func startOnSpawner(cmd *exec.Cmd, cpus placement.CPUs, netns string) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go spawnLoop()
	})
	req := spawnRequest{cmd: cmd, cpus: cpus, netns: netns, done: make(chan error, 1)}
	spawnCh <- req
	return <-req.done
}

// inNetNS runs fork with the calling thread, which the caller holds, in
// the network namespace whose file is path, and brings the thread back to
// its own namespace afterwards.
func inNetNS(path string, fork func() error) error {
	if path == "" {
		return fork()
	}
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	defer own.Close()
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	err = fork()
	if berr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); berr != nil {
		// Every later child would start in the host's namespace.
		return errors.Join(err, fmt.Errorf("leave network namespace %s: %w", path, berr))
	}
	return err
}
