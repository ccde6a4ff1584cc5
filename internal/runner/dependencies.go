package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sync"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// startDeps starts the study's dependencies together, each a server of
// its own (a deployment then waits for the slowest, RabbitMQ's 6 s at
// ipc, not for their sum), and publishes them in the study's order. On
// error those that started are kept, for stopDeps.
func (d *Deployment) startDeps(ctx context.Context, values map[string]string) error {
	all := d.cfg.study.Deps
	started := make([]*deps.Instance, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, dep := range all {
		wg.Go(func() { started[i], errs[i] = d.startDep(ctx, dep) })
	}
	wg.Wait()
	for _, in := range started {
		if in != nil {
			d.deps = append(d.deps, in)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, dep := range all {
		if err := d.publishDep(dep, started[i], values); err != nil {
			return err
		}
	}
	return nil
}

// stopDeps stops the dependencies together, once the services that used
// them are gone: bounded by the slowest rather than their sum.
func (d *Deployment) stopDeps() error {
	errs := make([]error, len(d.deps))
	var wg sync.WaitGroup
	for i, dep := range d.deps {
		wg.Go(func() { errs[i] = dep.Stop() })
	}
	wg.Wait()
	return errors.Join(append(errs, d.untrack(true))...)
}

// startDep starts a dependency.
func (d *Deployment) startDep(ctx context.Context, dep *study.Dependency) (*deps.Instance, error) {
	c := d.cfg
	kind, err := deps.ParseKind(dep.Kind)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", dep.Name, err)
	}
	in, err := deps.Start(ctx, kind, deps.Options{
		Name:   dep.Name,
		Dir:    filepath.Join(d.tmp, "dep-"+dep.Name),
		LogDir: c.logDir,
		Ports:  c.ports,
		Root:   c.values["root"],
		CPUs:   c.place.dependency(dep.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", dep.Name, err)
	}
	return in, nil
}

// publishDep publishes a started dependency's values as {dep.NAME.KEY}
// placeholders and accounts each of its processes.
func (d *Deployment) publishDep(dep *study.Dependency, in *deps.Instance, values map[string]string) error {
	c := d.cfg
	c.progress("  started %s (%s) on %s in %.2fs", dep.Name, dep.Kind, in.Addr, in.StartupTime.Seconds())
	for k, v := range in.Values {
		values["dep."+dep.Name+"."+k] = v
	}
	limits := d.depLimits(dep.Name)
	for i, p := range in.Processes() {
		name := dep.Name
		if i > 0 {
			// A helper's process is named DEP/PROGRAM; an accounted name
			// is one path element.
			name = dep.Name + "-" + path.Base(p.Name())
		}
		tracked, err := d.track(c.acct, name, p.Pid(), limits)
		if err != nil {
			return err
		}
		if i == 0 {
			c.place.started(results.PlacedDependency, dep.Name, p.Pid())
		}
		d.instances = append(d.instances, &instance{name: name, service: dep.Name, addr: in.Addr, proc: p, tracked: tracked, dep: true})
	}
	return nil
}

// depLimits are what a dependency's processes are capped and placed to.
func (d *Deployment) depLimits(name string) resources.Limits {
	dep := d.cfg.study.Dependency(name)
	return resources.Limits{CPUs: dep.Limits.CPUs, MemoryBytes: dep.Limits.MemoryBytes, CPUSet: d.cfg.place.dependency(name)}
}

// dependency returns the started dependency of that name, or nil.
func (d *Deployment) dependency(name string) *deps.Instance {
	for _, in := range d.deps {
		if in.Name == name {
			return in
		}
	}
	return nil
}
