package proc

import (
	"os/exec"
	"runtime"
	"sync"
)

// The kernel delivers Pdeathsig when the *thread* that forked the child
// exits, not when the process does. The Go runtime may retire an idle thread
// (e.g. one that a goroutine locked and exited without unlocking), which would
// SIGKILL healthy children mid-run. So every fork happens on one goroutine
// that locks its OS thread and never returns: that thread lives exactly as
// long as msbench does. The cost is one parked thread.

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

func spawnLoop() {
	runtime.LockOSThread() // never unlocked on purpose, see above
	for req := range spawnCh {
		req.done <- req.cmd.Start()
	}
}

// startOnSpawner runs cmd.Start on the dedicated forking thread. It does not
// take a context: once the request is queued the fork must be allowed to
// finish, otherwise a started child could be lost without a Wait.
func startOnSpawner(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go spawnLoop()
	})
	req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawnCh <- req
	return <-req.done
}
