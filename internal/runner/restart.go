package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/msbench/msbench/internal/resources"
)

// restartKillWait bounds the wait for a killed instance to go.
const restartKillWait = 5 * time.Second

// restartService starts every instance of a service anew, on its address
// and with its placeholders, after stopping what is left of it (a killed
// instance, a paused one, or a running one, which is SIGKILLed: a restart
// event stands for a crash and its recovery). It returns once each is
// ready again.
func (d *deployment) restartService(ctx context.Context, name string) error {
	var errs []error
	for _, old := range d.instancesOf(name) {
		if old.dep || old.svc == nil {
			continue
		}
		errs = append(errs, d.restartInstance(ctx, old))
	}
	return errors.Join(errs...)
}

func (d *deployment) restartInstance(ctx context.Context, old *instance) error {
	// What the old process used counts for the step: carried into the
	// new one's accounting, read before its cgroup goes.
	carried, err := old.tracked.Usage()
	if err != nil {
		return fmt.Errorf("restart %s: %w", old.name, err)
	}
	if err := old.proc.Kill(); err != nil {
		return fmt.Errorf("restart %s: %w", old.name, err)
	}
	// Its port and cgroup are free only once it is gone.
	select {
	case <-old.proc.Done():
	case <-time.After(restartKillWait):
		return fmt.Errorf("restart %s: still running %v after SIGKILL", old.name, restartKillWait)
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
