package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/resources"
)

// restartService starts every instance of a service anew, on its address
// and with its placeholders, after stopping what is left of it (a killed
// instance, a paused one, or a running one, which is SIGKILLed: a restart
// event stands for a crash and its recovery). It returns once each is
// ready again.
func (d *Deployment) restartService(ctx context.Context, name string) error {
	var errs []error
	for _, old := range d.instancesOf(name) {
		if old.dep || old.svc == nil {
			continue
		}
		errs = append(errs, d.restartInstance(ctx, old))
	}
	return errors.Join(errs...)
}

func (d *Deployment) restartInstance(ctx context.Context, old *instance) error {
	// What the old process used counts for the step: carried into the
	// new one's accounting, read before its cgroup goes.
	carried, err := old.tracked.Usage()
	if err != nil {
		return fmt.Errorf("restart %s: %w", old.name, err)
	}
	// Its port and cgroup are free only once it is gone.
	if err := old.proc.Crash(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	d.sampler.Remove(old.name)
	if err := old.tracked.Close(); err != nil {
		return fmt.Errorf("restart %s: %w", old.name, err)
	}
	i := slices.Index(d.instances, old)
	d.instances = slices.Delete(d.instances, i, i+1)
	in, err := d.start(ctx, d.cfg, old.svc, old.replica, old.addr, old.shared)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	// Back in the old one's place, so that the step's usage before and
	// after line up by index.
	d.instances = slices.Delete(d.instances, len(d.instances)-1, len(d.instances))
	d.instances = slices.Insert(d.instances, i, in)
	in.tracked = &carriedTracked{Tracked: in.tracked, carried: carried}
	return nil
}

// carriedTracked adds what earlier processes of an instance used to its
// current process's CPU, so that usage over a step that restarted it
// counts both. Peak memory is the current process's: the earlier one's
// peak was read when it was replaced, and the higher of the two is kept.
type carriedTracked struct {
	resources.Tracked
	carried resources.Usage
}

func (c *carriedTracked) Usage() (resources.Usage, error) {
	u, err := c.Tracked.Usage()
	if err != nil {
		return u, err
	}
	u.UserSec += c.carried.UserSec
	u.SysSec += c.carried.SysSec
	u.PeakMemBytes = max(u.PeakMemBytes, c.carried.PeakMemBytes)
	return u, nil
}

func (c *carriedTracked) ResetPeak() error {
	c.carried.PeakMemBytes = 0
	return c.Tracked.ResetPeak()
}

// restartDependency restarts a dependency (deps.Instance.RestartEach) and
// accounts its new processes in place of the old ones from the moment each
// runs, their CPU over the step carried over as a restarted service's is.
func (d *Deployment) restartDependency(ctx context.Context, dep *deps.Instance) error {
	olds := d.instancesOf(dep.Name)
	carried := make([]resources.Usage, len(olds))
	for i, old := range olds {
		u, err := old.tracked.Usage()
		if err != nil {
			return fmt.Errorf("restart %s: %w", dep.Name, err)
		}
		carried[i] = u
		// From here on its process may go at any moment, on purpose.
		old.faulted = true
	}
	var errs []error
	started := 0
	err := dep.RestartEach(ctx, func(p *proc.Process) {
		// The processes start helpers first; olds are in Processes'
		// order, the server first.
		i := len(olds) - 1 - started
		started++
		if i < 0 {
			errs = append(errs, fmt.Errorf("restart %s: it came back with more processes than the %d it had", dep.Name, len(olds)))
			return
		}
		old := olds[i]
		// What the old process spent stopping counts too: a cgroup keeps
		// it after the process is gone, /proc does not, so the later
		// reading wins only where it is the larger.
		if u, err := old.tracked.Usage(); err == nil && u.UserSec+u.SysSec > carried[i].UserSec+carried[i].SysSec {
			carried[i] = u
		}
		d.sampler.Remove(old.name)
		errs = append(errs, old.tracked.Close())
		old.proc = p
		tracked, err := d.track(d.cfg.acct, old.name, p.Pid(), d.depLimits(dep.Name))
		if err != nil {
			errs = append(errs, err)
			return
		}
		old.tracked = &carriedTracked{Tracked: tracked, carried: carried[i]}
	})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if started != len(olds) {
		errs = append(errs, fmt.Errorf("restart %s: it came back with %d processes, not the %d it had", dep.Name, started, len(olds)))
	}
	for _, old := range olds {
		old.faulted = false
	}
	return errors.Join(errs...)
}
