package resources

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msbench/msbench/internal/placement"
)

// Method names, recorded in results as provenance.
const (
	MethodCgroupV2 = "cgroup-v2"
	MethodCgroupV1 = "cgroup-v1"
	MethodProc     = "proc"
)

// ErrLimitsUnsupported is returned by Track when limits were asked for but
// the method cannot enforce them. Silently running uncapped would make the
// results lie about the experiment; a caller that accepts that passes a
// zero Limits.
var ErrLimitsUnsupported = errors.New("resource limits cannot be enforced")

// Limits caps a service. Zero fields mean no cap.
type Limits struct {
	CPUs        float64 // 1.5 = 150% of one core
	MemoryBytes int64
	// CPUSet places the service on these cores through the cgroup cpuset
	// controller where the accountant has one (Accountant.Cpuset). It is
	// not a cap that Track refuses without cgroups: the caller places the
	// process by CPU affinity anyway (proc.Spec.CPUs), and the cpuset only
	// keeps it there. Nil: every core the parent cgroup has.
	CPUSet placement.CPUs
}

// IsZero reports whether no cap is asked for (a placement is no cap).
func (l Limits) IsZero() bool { return l.CPUs == 0 && l.MemoryBytes == 0 }

func (l Limits) validate() error {
	if l.CPUs < 0 || l.MemoryBytes < 0 {
		return fmt.Errorf("negative limits %+v", l)
	}
	return nil
}

// Usage is what a tracked service consumed since Track.
type Usage struct {
	UserSec, SysSec float64
	// PeakMemBytes is the highest memory use since Track or the last
	// ResetPeak.
	PeakMemBytes    int64
	CurrentMemBytes int64
}

// CPUSec is user plus system time.
func (u Usage) CPUSec() float64 { return u.UserSec + u.SysSec }

// Accountant tracks the services of one run.
type Accountant interface {
	// Method is MethodCgroupV2, MethodCgroupV1 or MethodProc.
	Method() string
	// Track starts accounting pid (and its descendants) as service name,
	// applying limits. Names must be unique within a run.
	Track(name string, pid int, limits Limits) (Tracked, error)
	// Cpuset reports whether Track keeps each service on its
	// Limits.CPUSet through a cgroup cpuset (placement.MethodCpuset).
	Cpuset() bool
	// Cleanup closes what is still tracked and removes the run's cgroups.
	Cleanup() error
}

// Tracked is one service being accounted.
type Tracked interface {
	Name() string
	Usage() (Usage, error)
	// ResetPeak restarts peak memory tracking, e.g. at a new load step.
	ResetPeak() error
	// Move places every process and thread of the service on cpus, the
	// cgroup cpuset included where there is one: a deployment booted on
	// cores lent to it goes home before it is measured.
	Move(cpus placement.CPUs) error
	// Close stops tracking and removes the service's cgroup once its
	// processes are gone; it moves no process back.
	Close() error
}

func checkTrackArgs(name string, limits Limits) error {
	if err := validName(name); err != nil {
		return err
	}
	return limits.validate()
}

// validName keeps names usable as a single path element.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid name %q", name)
	}
	return nil
}
