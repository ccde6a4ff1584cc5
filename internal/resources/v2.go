package resources

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/msbench/msbench/internal/placement"
)

// v2Ops implements the unified hierarchy, where one directory holds every
// controller's files.
type v2Ops struct{}

func (v2Ops) method() string { return MethodCgroupV2 }

// prepareRun delegates cpu and memory from the root to the run's cgroup and
// from there to the service cgroups: v2 only offers a controller's files in
// a cgroup whose parent lists it in cgroup.subtree_control.
func (v2Ops) prepareRun(run ctlPaths) error {
	names := []string{"cpu", "memory"}
	if run.cpuset != "" {
		names = append(names, "cpuset")
	}
	for _, dir := range []string{filepath.Dir(run.cpu), run.cpu} {
		if err := enableControllers(dir, names...); err != nil {
			return err
		}
	}
	return nil
}

func enableControllers(dir string, names ...string) error {
	path := filepath.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	have := strings.Fields(string(b))
	var add []string
	for _, n := range names {
		if !slices.Contains(have, n) {
			add = append(add, "+"+n)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return writeFile(path, strings.Join(add, " "))
}

func (v2Ops) setCPUSet(svc ctlPaths, cpus placement.CPUs) error {
	return writeFile(filepath.Join(svc.cpuset, "cpuset.cpus"), cpus.String())
}

func (o v2Ops) setLimits(svc ctlPaths, l Limits) error {
	// An empty cpuset.cpus means the parent's cores.
	if svc.cpuset != "" && l.CPUSet != nil {
		if err := o.setCPUSet(svc, l.CPUSet); err != nil {
			return err
		}
	}
	if l.CPUs > 0 {
		q, err := cfsQuotaUS(l.CPUs)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(svc.cpu, "cpu.max"), fmt.Sprintf("%d %d", q, cfsPeriodUS)); err != nil {
			return err
		}
	}
	if l.MemoryBytes > 0 {
		return writeFile(filepath.Join(svc.memory, "memory.max"), strconv.FormatInt(l.MemoryBytes, 10))
	}
	return nil
}

func (v2Ops) readCPU(svc ctlPaths) (float64, float64, error) {
	path := filepath.Join(svc.cpu, "cpu.stat")
	st, err := readKeyed(path)
	if err != nil {
		return 0, 0, err
	}
	user, okU := st["user_usec"]
	sys, okS := st["system_usec"]
	if !okU || !okS {
		return 0, 0, fmt.Errorf("%s: no user_usec/system_usec", path)
	}
	return float64(user) / 1e6, float64(sys) / 1e6, nil
}

func (v2Ops) readMem(svc ctlPaths) (int64, error) {
	return readInt(filepath.Join(svc.memory, "memory.current"))
}

// openPeak keeps memory.peak open: since Linux 6.12 a write resets the peak
// only for reads through the same file descriptor.
func (v2Ops) openPeak(svc ctlPaths) kernelPeak {
	path := filepath.Join(svc.memory, "memory.peak")
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		return &v2Peak{f: f, resettable: true}
	}
	if f, err := os.Open(path); err == nil { // before 6.12: read-only
		return &v2Peak{f: f}
	}
	return nil // before 5.19: no memory.peak at all
}

type v2Peak struct {
	f          *os.File
	resettable bool
}

func (p *v2Peak) read() (int64, error) {
	buf := make([]byte, 32)
	n, err := p.f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, fmt.Errorf("read %s: %w", p.f.Name(), err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p.f.Name(), err)
	}
	return v, nil
}

func (p *v2Peak) reset() error {
	if !p.resettable {
		return errNoPeakReset
	}
	if _, err := p.f.Write([]byte("reset\n")); err != nil {
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return errNoPeakReset
		}
		return fmt.Errorf("reset %s: %w", p.f.Name(), err)
	}
	return nil
}

func (p *v2Peak) close() error { return p.f.Close() }
