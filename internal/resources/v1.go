package resources

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// v1Ops implements cgroup v1: cpu for the cap, cpuacct for CPU time, memory
// for usage and cap (memsw is left alone: swap caps are not needed here).
type v1Ops struct{}

func (v1Ops) method() string { return MethodCgroupV1 }

// prepareRun gives the run's cpuset the cores and memory nodes of its
// parent: a v1 cpuset starts empty, and neither a process nor a child
// cpuset can join an empty one.
func (v1Ops) prepareRun(run ctlPaths) error {
	if run.cpuset == "" {
		return nil
	}
	return v1Cpuset(run.cpuset, nil)
}

// v1Cpuset sets a v1 cpuset to cpus (nil: its parent's cores) and its
// parent's memory nodes.
func v1Cpuset(dir string, cpus placement.CPUs) error {
	parent := filepath.Dir(dir)
	mems, err := os.ReadFile(filepath.Join(parent, "cpuset.mems"))
	if err != nil {
		return err
	}
	value := cpus.String()
	if cpus == nil {
		b, err := os.ReadFile(filepath.Join(parent, "cpuset.cpus"))
		if err != nil {
			return err
		}
		value = strings.TrimSpace(string(b))
	}
	if err := writeFile(filepath.Join(dir, "cpuset.cpus"), value); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "cpuset.mems"), strings.TrimSpace(string(mems)))
}

func (v1Ops) setCPUSet(svc ctlPaths, cpus placement.CPUs) error {
	return v1Cpuset(svc.cpuset, cpus)
}

func (o v1Ops) setLimits(svc ctlPaths, l Limits) error {
	if svc.cpuset != "" {
		if err := o.setCPUSet(svc, l.CPUSet); err != nil {
			return err
		}
	}
	if l.CPUs > 0 {
		q, err := cfsQuotaUS(l.CPUs)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(svc.cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriodUS)); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(svc.cpu, "cpu.cfs_quota_us"), strconv.FormatInt(q, 10)); err != nil {
			return err
		}
	}
	if l.MemoryBytes > 0 {
		return writeFile(filepath.Join(svc.memory, "memory.limit_in_bytes"), strconv.FormatInt(l.MemoryBytes, 10))
	}
	return nil
}

// readCPU takes the total from cpuacct.usage, which the scheduler keeps in
// nanoseconds, and only the user/system split from the per-mode counters:
// those are sampled at the tick, and a service that runs in short bursts
// between ticks (an idle-ish Go server, with NO_HZ) can show no CPU at all
// there while it served a whole step. The split follows the kernel's own
// cputime_adjust, which does the same for cgroup v2's cpu.stat.
func (v1Ops) readCPU(svc ctlPaths) (float64, float64, error) {
	totalNS, err := readInt(filepath.Join(svc.cpuacct, "cpuacct.usage"))
	if err != nil {
		return 0, 0, err
	}
	user, sys, err := v1TickedCPU(svc)
	if err != nil {
		return 0, 0, err
	}
	total := float64(totalNS) / 1e9
	if sys == 0 {
		return total, 0, nil
	}
	if user == 0 {
		return 0, total, nil
	}
	userShare := user / (user + sys)
	return total * userShare, total * (1 - userShare), nil
}

// v1TickedCPU reads the per-mode counters: cpuacct.usage_user/usage_sys, or
// on kernels without them cpuacct.stat (in USER_HZ ticks).
func v1TickedCPU(svc ctlPaths) (float64, float64, error) {
	userNS, err := readInt(filepath.Join(svc.cpuacct, "cpuacct.usage_user"))
	if err == nil {
		sysNS, err := readInt(filepath.Join(svc.cpuacct, "cpuacct.usage_sys"))
		if err != nil {
			return 0, 0, err
		}
		return float64(userNS) / 1e9, float64(sysNS) / 1e9, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	st, err := readKeyed(filepath.Join(svc.cpuacct, "cpuacct.stat"))
	if err != nil {
		return 0, 0, err
	}
	return float64(st["user"]) / procfs.ClockTicks, float64(st["system"]) / procfs.ClockTicks, nil
}

// readMem reads memory.usage_in_bytes, which includes page cache charged to
// the group (as the limit does).
func (v1Ops) readMem(svc ctlPaths) (int64, error) {
	return readInt(filepath.Join(svc.memory, "memory.usage_in_bytes"))
}

func (v1Ops) openPeak(svc ctlPaths) kernelPeak {
	return v1Peak(filepath.Join(svc.memory, "memory.max_usage_in_bytes"))
}

// v1Peak is memory.max_usage_in_bytes; writing 0 resets it to the current
// usage.
type v1Peak string

func (p v1Peak) read() (int64, error) { return readInt(string(p)) }
func (p v1Peak) reset() error         { return writeFile(string(p), "0") }
func (p v1Peak) close() error         { return nil }
