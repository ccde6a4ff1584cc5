package resources

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestParseProcStatDeltas(t *testing.T) {
	before := "cpu  1000 10 500 8000 100 0 50 20 0 0\ncpu0 500 5 250 4000 50 0 25 10 0 0\ncpu1 500 5 250 4000 50 0 25 10 0 0\nintr 12345\nctxt 999\n"
	after := "cpu  1300 10 600 8300 100 0 60 120 7 0\ncpu0 650 5 300 4150 50 0 30 60 0 0\ncpu1 650 5 300 4150 50 0 30 60 0 0\nintr 12399\n"
	a, err := ParseProcStat([]byte(before))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseProcStat([]byte(after))
	if err != nil {
		t.Fatal(err)
	}
	d := b.Sub(a)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// 300 user + 100 system ticks of processes, 10 softirq, 100 stolen,
	// 300 idle: 810 ticks = 8.1 s over 2 cores.
	if d.Cores != 2 || !near(d.Busy(0), 4.1) || !near(d.Steal, 1) || !near(d.Total(), 8.1) || !near(d.SoftIRQ, 0.1) {
		t.Fatalf("delta %+v: busy %v total %v", d, d.Busy(0), d.Total())
	}
	// Over a window of 4.5 s the machine had 9 s: what idle and steal
	// leave is busy, whatever the ticks sampled.
	if !near(d.Busy(4.5), 5) || !near(d.Capacity(4.5), 9) || !near(d.Capacity(0), 8.1) {
		t.Fatalf("busy %v capacity %v", d.Busy(4.5), d.Capacity(4.5))
	}
	// An old kernel's line without steal reads as none.
	old, err := ParseProcStat([]byte("cpu 1 2 3 4\ncpu0 1 2 3 4\n"))
	if err != nil || old.Steal != 0 || !near(old.Idle, 0.04) || old.Cores != 1 {
		t.Fatalf("%+v %v", old, err)
	}
	for _, bad := range []string{"", "intr 5\n", "cpu 1 2\n", "cpu 1 x 3 4 5\n"} {
		if _, err := ParseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestReadMachineCPU(t *testing.T) {
	m, err := ReadMachineCPU()
	if err != nil || m.Cores < 1 || m.Total() <= 0 {
		t.Fatalf("%+v %v", m, err)
	}
}

// A service tracked with a CPUSet is moved to those cores by the cgroup
// cpuset where the machine has one (so the helper starts unplaced here),
// with its CPU cap kept; without cgroups the spawner's affinity places it.
func TestCpusetPlacesTheService(t *testing.T) {
	avail := placement.Available()
	if len(avail) < 2 {
		t.Skip("needs 2 cores")
	}
	want := avail[len(avail)-1:]
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			spec := proctest.Spec(t, "placed", "burn-child")
			limits := Limits{CPUs: 0.5, CPUSet: want}
			if !a.Cpuset() {
				spec.CPUs, limits.CPUs = want, 0
			}
			p := proctest.Start(t, spec)
			proctest.WaitMarker(t, p, proctest.ReadyMarker)
			tr := track(t, a, p, limits)
			if got, err := placement.Allowed(p.Pid()); err != nil || !got.Equal(want) {
				t.Errorf("Cpus_allowed_list %v (%v), want %v", got, err, want)
			}
			if a.Cpuset() {
				ct := tr.(*cgroupTracked)
				b, err := os.ReadFile(filepath.Join(ct.svc.cpuset, "cpuset.cpus"))
				if err != nil || strings.TrimSpace(string(b)) != want.String() {
					t.Errorf("cpuset.cpus %q (%v), want %s", b, err, want)
				}
				// The burner's child, forked before the move, moved too.
				procs, _ := os.ReadFile(filepath.Join(ct.svc.cpuset, "cgroup.procs"))
				if len(strings.Fields(string(procs))) != 2 {
					t.Errorf("cpuset holds %q, want the helper and its burner", procs)
				}
				for _, pid := range strings.Fields(string(procs)) {
					b, _ := os.ReadFile(filepath.Join("/proc", pid, "status"))
					if !strings.Contains(string(b), "Cpus_allowed_list:\t"+want.String()+"\n") {
						t.Errorf("pid %s is not on %s", pid, want)
					}
				}
				// The cap still holds beside the placement.
				if q, err := readInt(filepath.Join(ct.svc.cpu, "cpu.cfs_quota_us")); a.Method() == MethodCgroupV1 && (err != nil || q != 50_000) {
					t.Errorf("cpu.cfs_quota_us %d (%v), want 50000", q, err)
				}
			}
			stopAndClose(t, p, tr)
		})
	}
}

// The cpuset controller is used where mounted and never required.
func TestCpusetIsOptional(t *testing.T) {
	v1 := map[string]string{"cpu": "/c", "cpuacct": "/a", "memory": "/m"}
	if p, err := (Detection{V1: v1}).v1Roots(); err != nil || p.cpuset != "" || len(p.dirs()) != 3 {
		t.Fatalf("v1 without cpuset: %+v %v", p, err)
	}
	v1["cpuset"] = "/s"
	if p, err := (Detection{V1: v1}).v1Roots(); err != nil || p.cpuset != "/s" || len(p.dirs()) != 4 {
		t.Fatalf("v1 with cpuset: %+v %v", p, err)
	}
	if p, err := (Detection{V1: v1, Disabled: []string{"cpuset"}}).v1Roots(); err != nil || p.cpuset != "" {
		t.Fatalf("v1 with cpuset disabled: %+v %v", p, err)
	}
	if p, err := (Detection{V2Root: "/r", V2Controllers: []string{"cpu", "memory"}}).v2Roots(); err != nil || p.cpuset != "" {
		t.Fatalf("v2 without cpuset: %+v %v", p, err)
	}
	if p, err := (Detection{V2Root: "/r", V2Controllers: []string{"cpuset", "cpu", "memory"}}).v2Roots(); err != nil || p.cpuset != "/r" || len(p.dirs()) != 1 {
		t.Fatalf("v2 with cpuset: %+v %v", p, err)
	}
	d, err := parseMountinfo(strings.NewReader("36 31 0:33 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"))
	if err != nil || d.V1["cpuset"] != "/sys/fs/cgroup/cpuset" {
		t.Fatalf("%+v %v", d, err)
	}
}

// A service booted on some cores and moved goes with every process and
// thread it has, forked before the move or after it.
func TestMoveTakesTheServiceAlong(t *testing.T) {
	avail := placement.Available()
	if len(avail) < 2 {
		t.Skip("needs 2 cores")
	}
	boot, home := avail[:1], avail[len(avail)-1:]
	for _, method := range allMethods {
		t.Run(method, func(t *testing.T) {
			a := newTestAccountant(t, method)
			spec := proctest.Spec(t, "placed", "burn-child")
			spec.CPUs = boot
			p := proctest.Start(t, spec)
			proctest.WaitMarker(t, p, proctest.ReadyMarker)
			limits := Limits{}
			if a.Cpuset() {
				limits.CPUSet = boot
			}
			tr := track(t, a, p, limits)
			if err := tr.Move(home); err != nil {
				t.Fatal(err)
			}
			stats, err := procfs.All()
			if err != nil {
				t.Fatal(err)
			}
			tree := procfs.Descendants(stats, p.Pid())
			if len(tree) != 2 {
				t.Fatalf("%d processes, want the helper and its burner", len(tree))
			}
			for _, st := range tree {
				if got, err := placement.Allowed(st.PID); err != nil || !got.Equal(home) {
					t.Errorf("pid %d on %v (%v), want %v", st.PID, got, err, home)
				}
			}
			if ct, ok := tr.(*cgroupTracked); ok && ct.svc.cpuset != "" {
				b, err := os.ReadFile(filepath.Join(ct.svc.cpuset, "cpuset.cpus"))
				if err != nil || strings.TrimSpace(string(b)) != home.String() {
					t.Errorf("cpuset.cpus %q (%v), want %s", b, err, home)
				}
			}
			stopAndClose(t, p, tr)
		})
	}
}
