package deps

import (
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// A server that ignores its shutdown signal is killed once grace is over,
// not after a second grace for proc's SIGTERM.
func TestStopGracefullyIsBoundedByGrace(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM} {
		p := proctest.Start(t, proctest.Spec(t, "stubborn", "ignore-term"))
		proctest.WaitMarker(t, p, proctest.ReadyMarker)
		begin := time.Now()
		if err := stopGracefully(p, sig, grace); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(begin); took < grace || took > grace+grace/2 {
			t.Errorf("shutdown signal %d: stopped in %v, want about %v", sig, took, grace)
		}
		if p.ExitErr() == nil {
			t.Errorf("shutdown signal %d: exited cleanly, want killed", sig)
		}
	}
}
