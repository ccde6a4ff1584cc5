package resources

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(m, proctest.Modes{
		"burn-child": burnChildMode,
		"spawner":    spawnerMode,
		"alloc":      allocMode,
	})
}

// burnChildMode forks a CPU burner and waits for it, so that all CPU time
// is spent by a descendant of the tracked process.
func burnChildMode([]string) int {
	cmd := proctest.Command("burn")
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(proctest.ReadyMarker)
	_ = cmd.Wait()
	return 0
}

// spawnerMode [MiB hold] runs an "alloc" child on every SIGUSR1 and reports
// "alloc-done N: <exit error>" when it has exited.
func spawnerMode(args []string) int {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	fmt.Println(proctest.ReadyMarker)
	for n := 1; ; n++ {
		<-usr1
		err := proctest.Command("alloc", args...).Run()
		fmt.Printf("alloc-done %d: %v\n", n, err)
	}
}

// allocMode [MiB hold] touches MiB of fresh memory, holds it for hold and
// exits.
func allocMode(args []string) int {
	mib, _ := strconv.Atoi(args[0])
	hold, _ := time.ParseDuration(args[1])
	buf := make([]byte, mib<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	time.Sleep(hold)
	return int(buf[len(buf)-1]) - 1 // keeps buf alive until here
}

var runSeq atomic.Int64

// newTestAccountant returns an accountant of method with a fresh run id and
// checks at the end of the test that its cgroups are gone. It skips when
// the machine does not offer the method, and fails when it should but
// setting it up fails.
func newTestAccountant(t *testing.T, method string) Accountant {
	t.Helper()
	if why := unavailable(method); why != "" {
		t.Skipf("%s unavailable: %s", method, why)
	}
	runID := fmt.Sprintf("test%d-%d", os.Getpid(), runSeq.Add(1))
	a, err := NewMethod(runID, method)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		if ca, ok := a.(*cgroupAccountant); ok {
			for _, d := range ca.run.dirs() {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("run cgroup %s left behind (stat: %v)", d, err)
				}
			}
		}
	})
	return a
}

// unavailable says why method cannot run here, or "" if it can.
func unavailable(method string) string {
	if method == MethodProc {
		return ""
	}
	if os.Geteuid() != 0 {
		return "not root"
	}
	d, err := Detect()
	if err != nil {
		return err.Error()
	}
	if method == MethodCgroupV2 {
		_, err = d.v2Roots()
	} else {
		_, err = d.v1Roots()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

var allMethods = []string{MethodCgroupV2, MethodCgroupV1, MethodProc}

func cgroupMethods() []string { return allMethods[:2] }

func track(t *testing.T, a Accountant, p *proc.Process, limits Limits) Tracked {
	t.Helper()
	tr, err := a.Track(p.Name(), p.Pid(), limits)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func usage(t *testing.T, tr Tracked) Usage {
	t.Helper()
	u, err := tr.Usage()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// stopAndClose ends the service and removes its cgroup, checking that the
// directories are gone.
func stopAndClose(t *testing.T, p *proc.Process, tr Tracked) {
	t.Helper()
	if err := p.Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if ct, ok := tr.(*cgroupTracked); ok {
		for _, d := range ct.svc.dirs() {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("cgroup %s left after Close", filepath.Base(d))
			}
		}
	}
}
