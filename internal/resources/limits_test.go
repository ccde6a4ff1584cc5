package resources

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetLimitsWritesKernelFormat runs the limit writers against a fake
// cgroup directory, so the v2 format is checked on machines without v2.
func TestSetLimitsWritesKernelFormat(t *testing.T) {
	tests := []struct {
		name   string
		ops    cgroupOps
		limits Limits
		want   map[string]string
	}{
		{"v1 cpu and memory", v1Ops{}, Limits{CPUs: 1.5, MemoryBytes: 256 << 20}, map[string]string{
			"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "150000", "memory.limit_in_bytes": "268435456",
		}},
		{"v1 no limits", v1Ops{}, Limits{}, map[string]string{}},
		{"v2 cpu and memory", v2Ops{}, Limits{CPUs: 0.2, MemoryBytes: 64 << 20}, map[string]string{
			"cpu.max": "20000 100000", "memory.max": "67108864",
		}},
		{"v2 memory only", v2Ops{}, Limits{MemoryBytes: 1 << 30}, map[string]string{"memory.max": "1073741824"}},
	}
	files := []string{"cpu.cfs_period_us", "cpu.cfs_quota_us", "memory.limit_in_bytes", "cpu.max", "memory.max"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.ops.setLimits(ctlPaths{cpu: dir, cpuacct: dir, memory: dir}, tt.limits); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if got := string(b); got != tt.want[f] {
					t.Errorf("%s = %q, want %q", f, got, tt.want[f])
				}
			}
		})
	}
}

func TestCPUCapBelowKernelMinimum(t *testing.T) {
	_, err := cfsQuotaUS(0.001)
	if err == nil || !strings.Contains(err.Error(), "below the kernel minimum") {
		t.Errorf("err = %v", err)
	}
}

func TestReadCPUFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu.stat", "usage_usec 3500000\nuser_usec 3000000\nsystem_usec 500000\nnr_periods 0\n")
	write("cpuacct.usage", "6000000000\n") // v1's total, in ns
	tests := []struct {
		name      string
		ops       cgroupOps
		files     map[string]string // v1's per-mode counters, sampled at the tick
		user, sys float64
	}{
		{"v2 cpu.stat", v2Ops{}, nil, 3, 0.5},
		{"v1 total split by usage_user/usage_sys", v1Ops{}, map[string]string{"cpuacct.usage_user": "750000000", "cpuacct.usage_sys": "250000000"}, 4.5, 1.5},
		{"v1 cpuacct.stat fallback", v1Ops{}, map[string]string{"cpuacct.stat": "user 250\nsystem 50\n"}, 5, 1},
		// The ticks missed a bursty service: the total still counts.
		{"v1 no ticks at all", v1Ops{}, map[string]string{"cpuacct.usage_user": "0", "cpuacct.usage_sys": "0"}, 6, 0},
		{"v1 system ticks only", v1Ops{}, map[string]string{"cpuacct.usage_user": "0", "cpuacct.usage_sys": "4000000"}, 0, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []string{"cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"} {
				os.Remove(filepath.Join(dir, f))
			}
			for name, content := range tt.files {
				write(name, content)
			}
			u, s, err := tt.ops.readCPU(ctlPaths{cpu: dir, cpuacct: dir, memory: dir})
			if err != nil || math.Abs(u-tt.user) > 1e-9 || math.Abs(s-tt.sys) > 1e-9 {
				t.Errorf("got %v %v %v, want %v %v", u, s, err, tt.user, tt.sys)
			}
		})
	}
}
