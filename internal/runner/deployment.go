package runner

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/resources"
)

// Instance is one running replica of a service, or the server of a
// dependency, as a test addresses it.
type Instance struct {
	Name string // service, or service-N for replicas after the first
	Addr string
	Log  string // the file its output goes to
	// Tmp is a service instance's private TMPDIR ({tmp}), removed with
	// the deployment; "" for a dependency's process.
	Tmp string
}

// Values are the placeholders the deployment provides: the run's,
// the variant's, service.NAME.addr|addrs|port, dep.NAME.KEY, and those
// its setup captured.
func (d *Deployment) Values() map[string]string { return maps.Clone(d.values) }

// Addr is where a client of the lab (the load) reaches a service: its
// first instance, or the generator's link to it; "" for a service the
// variant does not run.
func (d *Deployment) Addr(service string) string {
	if d.instance(service) == nil {
		return ""
	}
	return d.loadAddr(service)
}

// Instances lists every instance of a service in replica order, or the
// processes of a dependency.
func (d *Deployment) Instances(name string) []Instance {
	var out []Instance
	for _, in := range d.instancesOf(name) {
		out = append(out, Instance{Name: in.name, Addr: in.addr, Log: in.proc.LogPath(), Tmp: in.tmp})
	}
	return out
}

// Usage is what an instance (by its Instances name) has used since it
// started, as a run accounts it: CPU seconds, and memory now and at its
// peak since the start or ResetPeak. Memory is the instance's cgroup's
// where there is one (its processes', their page cache's and the
// kernel's for them), the processes' resident sets where not.
func (d *Deployment) Usage(instance string) (resources.Usage, error) {
	t, err := d.tracked(instance)
	if err != nil {
		return resources.Usage{}, err
	}
	return t.Usage()
}

// ResetPeak starts an instance's peak memory again from its use now.
func (d *Deployment) ResetPeak(instance string) error {
	t, err := d.tracked(instance)
	if err != nil {
		return err
	}
	return t.ResetPeak()
}

func (d *Deployment) tracked(instance string) (resources.Tracked, error) {
	for _, in := range d.instances {
		if in.name == instance && in.tracked != nil {
			return in.tracked, nil
		}
	}
	return nil, fmt.Errorf("usage of %s: no such instance accounted", instance)
}

// killWait bounds how long Kill waits for a process to go after SIGKILL.
const killWait = 10 * time.Second

// Kill ends every instance of a service or dependency as a crash does, and
// returns once each is gone (its port refuses); Restart brings it back.
func (d *Deployment) Kill(name string) error {
	if err := d.act(context.Background(), actKill, name); err != nil || d.pods != nil {
		// A pod's Kill returns once the API has none left.
		return err
	}
	for _, in := range d.instancesOf(name) {
		select {
		case <-in.proc.Done():
		case <-time.After(killWait):
			return fmt.Errorf("kill %s: %s still runs %s after SIGKILL", name, in.name, killWait)
		}
	}
	return nil
}

// Restart starts a service's instances or a dependency again, on the same
// addresses with the same placeholders, once each is ready.
func (d *Deployment) Restart(ctx context.Context, name string) error {
	return d.act(ctx, actRestart, name)
}

// Terminate stops one instance as the lab stops a service between
// variants, SIGTERM and SIGKILL after the grace, and returns once it is
// gone; the rest of the deployment runs on.
func (d *Deployment) Terminate(instance string) error {
	for _, in := range d.instances {
		if in.name == instance && !in.dep {
			in.faulted = true
			return in.proc.Stop(context.Background(), stopGrace)
		}
	}
	return fmt.Errorf("terminate %s: no such instance of a service", instance)
}

// Pause stops every instance of a service or dependency where it stands
// (SIGSTOP), as a hung process; Resume continues it.
func (d *Deployment) Pause(name string) error { return d.act(context.Background(), actPause, name) }

// Resume continues what Pause stopped.
func (d *Deployment) Resume(name string) error { return d.act(context.Background(), actResume, name) }

// Stop ends everything the deployment started, in the reverse of the
// start order, and removes its files. A second Stop does nothing.
func (d *Deployment) Stop() error { return d.stop() }

// Exit is how an instance of a service ended when Stop stopped it.
type Exit struct {
	Instance string
	Log      string
	// Err is its exit error, nil for status 0.
	Err error
	proc.Stopping
}

// Exits are how Stop ended the services' instances that were still
// running, in start order; one a fault had ended (Kill, Terminate) is not
// among them. A service's promise of a clean shutdown (status 0 on
// SIGTERM, within the grace) is checked on these.
func (d *Deployment) Exits() []Exit {
	var out []Exit
	for _, in := range d.instances {
		if st := in.proc.Stopping(); !in.dep && st.Signalled {
			out = append(out, Exit{Instance: in.name, Log: in.proc.LogPath(), Err: in.proc.ExitErr(), Stopping: st})
		}
	}
	return out
}
