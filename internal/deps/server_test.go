package deps

import (
	"os"
	"path/filepath"
	"strings"
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

// BinDir may list several directories, as a standard image spreads a
// kind's programs over them: each program is taken from the first that
// holds it as an executable, and none outside the list is.
func TestProgramInBinDirList(t *testing.T) {
	first, second, empty := t.TempDir(), t.TempDir(), t.TempDir()
	for path, mode := range map[string]os.FileMode{
		filepath.Join(first, "both"):         0o755,
		filepath.Join(second, "both"):        0o755,
		filepath.Join(second, "second"):      0o755,
		filepath.Join(first, "not-runnable"): 0o644,
	} {
		if err := os.WriteFile(path, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	list := strings.Join([]string{empty, first, second}, string(filepath.ListSeparator))
	tests := []struct {
		name, want, err string
	}{
		{name: "both", want: filepath.Join(first, "both")},
		{name: "second", want: filepath.Join(second, "second")},
		{name: "not-runnable", err: "not-runnable not found in " + list + ": hint"},
		{name: "sh", err: "sh not found in " + list + ": hint"}, // on PATH, not in the list
	}
	for _, tt := range tests {
		got, err := program(&env{binDir: list}, tt.name, "hint")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("program(%s) = %q, %v; want the error %q", tt.name, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("program(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
