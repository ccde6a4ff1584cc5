package resources

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

const mib = 1 << 20

func TestCPUAccounting(t *testing.T) {
	for _, method := range allMethods {
		for _, mode := range []string{"burn", "burn-child"} {
			t.Run(method+"/"+mode, func(t *testing.T) {
				a := newTestAccountant(t, method)
				p := proctest.StartHelper(t, "burner", mode)
				before := treeCPU(t, p.Pid())
				tr := track(t, a, p, Limits{})
				// Wait for CPU actually burnt, not for wall time: on a busy
				// machine a second of wall time may be little CPU.
				burnt := waitForCPU(t, p.Pid(), before, 0.5)
				u := usage(t, tr)
				after := treeCPU(t, p.Pid()) - before
				// The accountant must agree with the kernel's per-process
				// counters, read just before and after it; those are kept
				// in 10 ms ticks and split per thread, hence the slack.
				if u.CPUSec() < 0.85*burnt-0.05 || u.CPUSec() > 1.15*after+0.05 {
					t.Errorf("accounted %.2fs of CPU; the process tree burnt %.2f..%.2fs meanwhile", u.CPUSec(), burnt, after)
				}
				// A cgroup only holds memory charged after the move, which
				// for an idle-allocating burner can be nothing.
				if u.CurrentMemBytes <= 0 && method == MethodProc {
					t.Errorf("no memory for a running process: %+v", u)
				}
				stopAndClose(t, p, tr)
			})
		}
	}
}

// treeCPU is the CPU seconds the kernel has counted for pid and its live
// descendants, from /proc.
func treeCPU(t *testing.T, pid int) float64 {
	t.Helper()
	all, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	var ticks uint64
	for _, st := range procfs.Descendants(all, pid) {
		ticks += st.UTime + st.STime
	}
	return float64(ticks) / procfs.ClockTicks
}

// waitForCPU waits until the tree of pid burnt want seconds of CPU since
// from, and returns how much it burnt.
func waitForCPU(t *testing.T, pid int, from, want float64) float64 {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got := treeCPU(t, pid) - from; got >= want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the burner did not get %.1fs of CPU in a minute", want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCPUCap(t *testing.T) {
	for _, method := range cgroupMethods() {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			p := proctest.StartHelper(t, "capped", "burn")
			tr := track(t, a, p, Limits{CPUs: 0.2})
			assertInCgroup(t, p.Pid(), "capped")
			time.Sleep(time.Second)
			u := usage(t, tr)
			// The cap is an upper bound; a busy machine may give less.
			if u.CPUSec() > 0.35 || u.CPUSec() <= 0 {
				t.Errorf("CPU %.2fs in 1s with a 0.2 cap, want some but at most 0.35", u.CPUSec())
			}
			stopAndClose(t, p, tr)
		})
	}
}

// assertInCgroup checks /proc/PID/cgroup: every line of a cpu or memory
// hierarchy (or the v2 line) must point into the service's cgroup.
func assertInCgroup(t *testing.T, pid int, name string) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasSuffix(line, "/"+name) && strings.Contains(line, "/msbench-") {
			found++
		}
	}
	if found == 0 {
		t.Errorf("pid %d not in a msbench cgroup:\n%s", pid, b)
	}
}

func TestLimitsRefusedWithoutCgroups(t *testing.T) {
	a := newTestAccountant(t, MethodProc)
	p := proctest.StartHelper(t, "svc", "sleep")
	for _, l := range []Limits{{CPUs: 1}, {MemoryBytes: 64 * mib}} {
		if _, err := a.Track("svc", p.Pid(), l); !errors.Is(err, ErrLimitsUnsupported) {
			t.Errorf("Track with %+v: err = %v, want ErrLimitsUnsupported", l, err)
		}
	}
	tr := track(t, a, p, Limits{}) // explicitly uncapped is fine
	stopAndClose(t, p, tr)
}

func TestTrackErrors(t *testing.T) {
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			p := proctest.StartHelper(t, "svc", "sleep")
			tr := track(t, a, p, Limits{})
			tests := []struct {
				name   string
				svc    string
				pid    int
				limits Limits
				want   string
			}{
				{"duplicate name", "svc", p.Pid(), Limits{}, "already tracked"},
				{"path in name", "a/b", p.Pid(), Limits{}, "invalid name"},
				{"negative limit", "neg", p.Pid(), Limits{CPUs: -1}, "negative"},
				{"no such pid", "ghost", 1 << 30, Limits{}, "ghost"},
			}
			for _, tt := range tests {
				_, err := a.Track(tt.svc, tt.pid, tt.limits)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
				}
			}
			stopAndClose(t, p, tr)
		})
	}
}

func TestMemoryPeakAndReset(t *testing.T) {
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			p := proctest.StartHelper(t, "mem", "spawner", "64", "400ms")
			tr := track(t, a, p, Limits{})
			if u := usage(t, tr); u.PeakMemBytes > 48*mib {
				t.Fatalf("peak %d MiB before allocating", u.PeakMemBytes/mib)
			}
			allocStep(t, p.Pid(), p.LogPath(), tr, 1)
			u := usage(t, tr)
			if u.PeakMemBytes < 64*mib {
				t.Errorf("peak %d MiB after a child touched 64 MiB", u.PeakMemBytes/mib)
			}
			if u.CurrentMemBytes > u.PeakMemBytes-32*mib {
				t.Errorf("current %d MiB not below peak %d MiB after the child exited",
					u.CurrentMemBytes/mib, u.PeakMemBytes/mib)
			}
			if err := tr.ResetPeak(); err != nil {
				t.Fatal(err)
			}
			if u := usage(t, tr); u.PeakMemBytes > 48*mib {
				t.Errorf("peak %d MiB after ResetPeak, want about current (%d MiB)",
					u.PeakMemBytes/mib, u.CurrentMemBytes/mib)
			}
			// The next step measures its own peak again.
			allocStep(t, p.Pid(), p.LogPath(), tr, 2)
			if u := usage(t, tr); u.PeakMemBytes < 64*mib {
				t.Errorf("peak %d MiB in the step after a reset", u.PeakMemBytes/mib)
			}
			stopAndClose(t, p, tr)
		})
	}
}

// allocStep makes the spawner run one allocating child and samples usage
// meanwhile, as a Sampler would, until the child is done.
func allocStep(t *testing.T, pid int, log string, tr Tracked, n int) string {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	marker := "alloc-done " + strconv.Itoa(n) + ":"
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		usage(t, tr)
		b, _ := os.ReadFile(log)
		if i := strings.Index(string(b), marker); i >= 0 {
			line, _, _ := strings.Cut(string(b[i+len(marker):]), "\n")
			return strings.TrimSpace(line)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in log", marker)
	return ""
}

func TestMemoryLimit(t *testing.T) {
	for _, method := range cgroupMethods() {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			p := proctest.StartHelper(t, "mem", "spawner", "96", "10ms")
			tr := track(t, a, p, Limits{MemoryBytes: 48 * mib})
			if res := allocStep(t, p.Pid(), p.LogPath(), tr, 1); res != "signal: killed" {
				t.Errorf("child allocating 96 MiB under a 48 MiB cap ended with %q, want OOM kill", res)
			}
			stopAndClose(t, p, tr)
		})
	}
}

func TestCleanupRemovesEverything(t *testing.T) {
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method) // its t.Cleanup checks the run dirs
			var tracked []Tracked
			for _, name := range []string{"one", "two"} {
				p := proctest.StartHelper(t, name, "sleep")
				tracked = append(tracked, track(t, a, p, Limits{}))
				if err := p.Stop(t.Context(), time.Second); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Cleanup(); err != nil {
				t.Fatal(err)
			}
			if err := a.Cleanup(); err != nil {
				t.Errorf("second Cleanup: %v", err)
			}
			for _, tr := range tracked {
				if _, err := tr.Usage(); err == nil {
					t.Errorf("Usage of %s after Cleanup succeeded", tr.Name())
				}
			}
		})
	}
}

func TestCloseWhileRunningReportsMembers(t *testing.T) {
	method := MethodCgroupV1
	if unavailable(MethodCgroupV2) == "" {
		method = MethodCgroupV2
	}
	a := newTestAccountant(t, method)
	p := proctest.StartHelper(t, "busy", "sleep")
	tr := track(t, a, p, Limits{})
	err := tr.Close()
	if err == nil || !strings.Contains(err.Error(), "still holds pids "+strconv.Itoa(p.Pid())) {
		t.Errorf("Close with a live process: err = %v, want it to name pid %d", err, p.Pid())
	}
	stopAndClose(t, p, tr) // Close can be repeated once the process is gone
}
