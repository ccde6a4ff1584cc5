package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// stateIn writes st as the state of a cluster in a fresh directory.
func stateIn(t *testing.T, st state) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeState(layout{dir}, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// initProcess is pid 1, alive for as long as the machine.
func initProcess(t *testing.T) process {
	t.Helper()
	st, err := procfs.ReadStat(1)
	if err != nil {
		t.Fatal(err)
	}
	return process{PID: 1, Start: st.StartTime}
}

func TestDownLeavesAClusterStillStarting(t *testing.T) {
	useMachineFile(t)
	dir := stateIn(t, state{Owner: initProcess(t), Netns: "msbench-kube-never-made"})
	err := Down(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "still being started by pid 1") {
		t.Fatalf("Down = %v, want a refusal naming the starting process", err)
	}
	if _, err := os.Stat(layout{dir}.stateFile()); err != nil {
		t.Errorf("the state file went: %v", err)
	}
}

func TestSweepDead(t *testing.T) {
	useMachineFile(t)
	dead := initProcess(t)
	dead.Start++ // pid 1 started at another time is no process alive
	for _, tc := range []struct {
		name  string
		st    state
		swept bool
	}{
		{"ready cluster", state{Ready: true}, false},
		{"still starting", state{Owner: initProcess(t)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := stateIn(t, tc.st)
			swept, err := SweepDead(context.Background(), dir)
			if swept != tc.swept || err != nil {
				t.Errorf("SweepDead = %v, %v; want %v, nil", swept, err, tc.swept)
			}
			if _, err := os.Stat(layout{dir}.stateFile()); err != nil {
				t.Errorf("the state file went: %v", err)
			}
		})
	}
	t.Run("no cluster", func(t *testing.T) {
		if swept, err := SweepDead(context.Background(), t.TempDir()); swept || err != nil {
			t.Errorf("SweepDead = %v, %v; want false, nil", swept, err)
		}
	})
	t.Run("a dead Up's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("Down restores sysctls, which needs root")
		}
		sysctls, err := readSysctls()
		if err != nil {
			t.Fatal(err)
		}
		// Nothing was started: the state of an Up killed before its
		// first step, whose Down must still remove the state, and
		// leave /run/netns as it is now.
		dirState := state{Owner: dead, Netns: "msbench-kube-never-made", Sysctls: sysctls, NetnsMounted: isMountPoint(netnsDir)}
		dir := stateIn(t, dirState)
		swept, err := SweepDead(context.Background(), dir)
		if !swept || err != nil {
			t.Fatalf("SweepDead = %v, %v; want true, nil", swept, err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state directory left: %v", err)
		}
		if got, want := isMountPoint(netnsDir), dirState.NetnsMounted; got != want {
			t.Errorf("%s a mount point: %v, before %v", netnsDir, got, want)
		}
	})
}
