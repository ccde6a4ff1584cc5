package resources

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// v1Ops implements cgroup v1: cpu for the cap, cpuacct for CPU time, memory
// for usage and cap (memsw is left alone: swap caps are not needed here).
type v1Ops struct{}

func (v1Ops) method() string { return MethodCgroupV1 }

func (v1Ops) prepareRun(ctlPaths) error { return nil }

func (v1Ops) setLimits(svc ctlPaths, l Limits) error {
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

// readCPU prefers the nanosecond counters; cpuacct.stat (in USER_HZ ticks)
// is the fallback for kernels without cpuacct.usage_user.
func (v1Ops) readCPU(svc ctlPaths) (float64, float64, error) {
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
