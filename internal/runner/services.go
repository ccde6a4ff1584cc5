package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/hosts"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// instance is one running replica of a service, or one process of a
// dependency.
type instance struct {
	name    string // service, or service-N for replicas after the first
	service string
	addr    string
	tmp     string // its TMPDIR
	proc    process
	tracked resources.Tracked
	dep     bool
	started time.Time
	ready   time.Time
	faulted bool        // killed or paused on purpose by a step's event
	host    *hosts.Host // the emulated host it runs on; nil: msbench's
	// What a restart starts again: the service, replica and the
	// placeholders it was started with; nil svc for a dependency.
	svc     *study.Service
	replica int
	shared  map[string]string
}

// process is an instance's running program as the deployment acts on it:
// a child of msbench (*proc.Process), or a pod on a cluster (podProcess).
type process interface {
	Pid() int // 0 where it is not a process of this machine
	LogPath() string
	Done() <-chan struct{}
	ExitErr() error
	Pause() error
	Resume() error
	Kill() error
	Crash() error
	Stop(ctx context.Context, grace time.Duration) error
	Stopping() proc.Stopping
}

// Deployment is everything one variant runs, on this machine: its modules
// started in dependency order, stopped in reverse, never outliving the
// runner (or the test) that deployed it. Its exported methods are those of
// docs/backends.md's Deployment that the API tests need.
type Deployment struct {
	// ctx is the run's: once it is cancelled (Ctrl-C, SIGTERM), stopping
	// gives in-flight requests a short grace instead of a clean shutdown in
	// order.
	ctx       context.Context
	cfg       deployConfig        // what started it, for restarts
	modules   modules             // its lab features, in start order
	values    map[string]string   // placeholders: builds, variant, services, dependencies, setup
	addrs     map[string][]string // every replica's address, by service
	group     proc.Group
	deps      []*deps.Instance
	instances []*instance
	tmp       string
	acct      resources.Accountant
	sampler   *resources.Sampler
	stopSamp  context.CancelFunc
	warnings  []string
	links     []*edge // emulated network links, started before the services
	network   *hosts.Network
	forwards  []*links.Proxy // to the dependencies from the hosts
	// pods are what a deployment on a cluster runs; nil on this machine.
	pods *clusterDeployment
}

type deployConfig struct {
	study    *study.Study
	variant  study.Variant
	values   map[string]string // root, data, build.NAME
	logDir   string
	ports    *proc.PortAllocator
	acct     resources.Accountant
	tmpRoot  string
	progress func(format string, args ...any)
	place    *cpuPlan // nil: nothing placed
	// scope prefixes the names its processes are accounted under, unique
	// among the deployments that share the accountant at once; "" for a
	// run's, which come one after another.
	scope string
}

// deploy starts every service of the study for one variant and waits until
// each is ready. On error everything started so far is stopped.
func deploy(ctx context.Context, c deployConfig) (*Deployment, error) {
	d := &Deployment{ctx: ctx, cfg: c, acct: c.acct, sampler: resources.NewSampler(0)}
	return d.launch(ctx,
		feature{d.makeWorkDir, d.removeWorkDir},
		feature{d.startHosts, d.stopHosts},
		feature{d.startDeps, d.stopDeps},
		feature{d.startForwards, d.stopForwards},
		// Ports are only chosen: what listens on them gives them back.
		feature{d.chooseAddrs, func() error { return nil }},
		feature{d.startLinks, d.stopLinks},
		feature{d.startServices, d.stopServices},
		feature{d.startSampler, d.stopSampler},
	)
}

// launch starts the deployment's modules in order, given the run's and
// the variant's placeholders, each adding those it provides. On error it
// stops everything started so far.
func (d *Deployment) launch(ctx context.Context, modules ...module) (*Deployment, error) {
	values := maps.Clone(d.cfg.values)
	maps.Copy(values, d.cfg.study.Placeholders(d.cfg.variant))
	if err := d.modules.start(ctx, values, modules...); err != nil {
		// What failed to start says why; what failed to stop after it
		// would bury that.
		_ = d.stop()
		return nil, err
	}
	d.values = values
	return d, nil
}

// makeWorkDir makes the deployment's directory, where its services' and
// dependencies' files go.
func (d *Deployment) makeWorkDir(context.Context, map[string]string) error {
	var err error
	d.tmp, err = os.MkdirTemp(d.cfg.tmpRoot, "svc-")
	if err == nil {
		// Dependencies run as their own system users (postgres, mysql),
		// who must reach their directories below this one.
		err = os.Chmod(d.tmp, 0o755)
	}
	if err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	return nil
}

func (d *Deployment) removeWorkDir() error { return os.RemoveAll(d.tmp) }

// chooseAddrs chooses every service's addresses before anything starts,
// so that a service can be told where one that starts after it will
// listen, and publishes them as {service.NAME.addr|addrs|port}.
func (d *Deployment) chooseAddrs(_ context.Context, values map[string]string) error {
	c := d.cfg
	d.addrs = map[string][]string{}
	for _, svc := range c.study.Services {
		replicas := svc.Instances(c.variant)
		if replicas == 0 {
			continue
		}
		for range replicas {
			port, err := c.ports.Next()
			if err != nil {
				return fmt.Errorf("deploy %s: %w", svc.Name, err)
			}
			host := "127.0.0.1"
			if h := d.host(c, svc.Name); h != nil {
				host = h.Addr.String()
			}
			d.addrs[svc.Name] = append(d.addrs[svc.Name], net.JoinHostPort(host, strconv.Itoa(port)))
		}
		study.SetServiceAddrs(values, svc.Name, d.addrs[svc.Name])
	}
	if err := c.study.ExpandAttrs(c.variant, values); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	return nil
}

// startServices starts every replica of every service the variant runs,
// in the study's order; a service the variant leaves out (when:) has no
// address, so nothing is started for it.
func (d *Deployment) startServices(ctx context.Context, values map[string]string) error {
	c := d.cfg
	for _, svc := range c.study.StartOrder() {
		own, err := d.linkValues(c, svc.Name, values)
		if err != nil {
			return fmt.Errorf("deploy %s: %w", svc.Name, err)
		}
		for r, addr := range d.addrs[svc.Name] {
			inst, err := d.start(ctx, c, svc, r, addr, own)
			if err != nil {
				return err
			}
			c.progress("  started %s on %s", inst.name, inst.addr)
		}
	}
	return nil
}

// stopServices stops the services in reverse start order, or all at once
// once the run is cancelled (Ctrl-C, SIGTERM): in-flight requests get a
// short grace instead of a clean shutdown in order.
func (d *Deployment) stopServices() error {
	var err error
	if d.ctx.Err() != nil {
		err = d.group.StopAllAtOnce(interruptGrace)
	} else {
		err = d.group.StopAll(context.Background(), stopGrace)
	}
	return errors.Join(err, d.untrack(false))
}

// startSampler samples every accounted instance from the moment all are
// ready.
func (d *Deployment) startSampler(context.Context, map[string]string) error {
	ctx, cancel := context.WithCancel(context.Background())
	d.stopSamp = cancel
	go d.sampler.Run(ctx)
	return nil
}

func (d *Deployment) stopSampler() error {
	d.stopSamp()
	return nil
}

func (d *Deployment) start(ctx context.Context, c deployConfig, svc *study.Service, replica int, addr string, shared map[string]string) (*instance, error) {
	name := svc.Name
	if replica > 0 {
		name = fmt.Sprintf("%s-%d", svc.Name, replica)
	}
	tmp := filepath.Join(d.tmp, name)
	if err := os.MkdirAll(tmp, 0o777); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	host, port, _ := net.SplitHostPort(addr)
	values := map[string]string{"addr": addr, "host": host, "port": port, "replica": strconv.Itoa(replica), "tmp": tmp}
	for k, v := range shared {
		values[k] = v
	}
	command, err := placeholder.Expand(svc.Command, values)
	if err != nil {
		return nil, fmt.Errorf("start %s: command %w", name, err)
	}
	// A private TMPDIR, first so that a study may still set its own: what a
	// service leaves in its temp dir goes with the deployment, not into /tmp.
	env := []string{"TMPDIR=" + tmp}
	for _, kv := range svc.Env {
		v, err := placeholder.Expand(kv[1], values)
		if err != nil {
			return nil, fmt.Errorf("start %s: env %s: %w", name, kv[0], err)
		}
		env = append(env, kv[0]+"="+v)
	}
	dir := c.values["root"]
	if svc.Dir != "" {
		dir = filepath.Join(c.values["root"], svc.Dir)
	}
	on := d.host(c, svc.Name)
	netns := ""
	if on != nil {
		netns = on.Path()
	}
	started := time.Now()
	// exec makes the service itself the process group leader, so its pid
	// is the one accounted and signalled.
	p, err := d.group.Start(ctx, proc.Spec{
		Name:    name,
		Path:    "/bin/sh",
		Args:    []string{"-c", "exec " + command},
		Env:     env,
		Dir:     dir,
		LogPath: filepath.Join(c.logDir, name+".log"),
		User:    svc.User,
		CPUs:    c.place.service(svc.Name),
		NetNS:   netns,
	})
	if err != nil {
		return nil, err
	}
	inst := &instance{name: name, service: svc.Name, addr: addr, tmp: tmp, proc: p, started: started, host: on, svc: svc, replica: replica, shared: shared}
	d.instances = append(d.instances, inst)
	limits := resources.Limits{CPUs: svc.Limits.CPUs, MemoryBytes: svc.Limits.MemoryBytes, CPUSet: c.place.service(svc.Name)}
	if inst.tracked, err = d.track(c.acct, name, p.Pid(), limits); err != nil {
		// A process gone before it could be accounted is a failed start,
		// and its log says why; give the reaper a moment to notice.
		select {
		case <-p.Done():
			return nil, fmt.Errorf("start %s: exited at once (%v); its log ends:\n%s", name, p.ExitErr(), proc.LogTail(p.LogPath(), 20))
		case <-time.After(time.Second):
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
	}
	c.place.started(results.PlacedService, svc.Name, p.Pid())
	check, err := readiness(svc.Ready, values)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := proc.WaitReady(ctx, p, check, svc.Ready.Timeout); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	inst.ready = time.Now()
	return inst, nil
}

// untrack ends the accounting of every process of the dependencies (dep)
// or of the services.
func (d *Deployment) untrack(dep bool) error {
	var errs []error
	for _, in := range d.instances {
		if in.dep == dep && in.tracked != nil {
			errs = append(errs, in.tracked.Close())
		}
	}
	return errors.Join(errs...)
}

// track accounts a process, falling back to no caps (with a warning) where
// the machine cannot enforce them.
func (d *Deployment) track(acct resources.Accountant, name string, pid int, limits resources.Limits) (resources.Tracked, error) {
	scoped := d.cfg.scope + name
	tracked, err := acct.Track(scoped, pid, limits)
	if errors.Is(err, resources.ErrLimitsUnsupported) {
		d.warnings = append(d.warnings, fmt.Sprintf("%s: limits not enforced: %v", name, err))
		tracked, err = acct.Track(scoped, pid, resources.Limits{CPUSet: limits.CPUSet})
	}
	if err != nil {
		return nil, fmt.Errorf("account resources of %s: %w", name, err)
	}
	if scoped != name {
		tracked = renamed{Tracked: tracked, name: name}
	}
	d.sampler.Add(tracked)
	return tracked, nil
}

// renamed is a process accounted under its deployment's scope, named as
// the deployment names it (its sampler's series, a restart's Remove).
type renamed struct {
	resources.Tracked
	name string
}

func (r renamed) Name() string { return r.name }

func readiness(r study.Ready, values map[string]string) (proc.Check, error) {
	if r.HTTP != "" {
		u, err := placeholder.Expand(r.HTTP, values)
		return proc.HTTPCheck{URL: u}, err
	}
	a, err := placeholder.Expand(r.TCP, values)
	return proc.TCPCheck{Addr: a}, err
}

// crashed returns the first instance that exited on its own, if any.
func (d *Deployment) crashed() *instance {
	for _, in := range d.instances {
		if in.faulted {
			continue
		}
		select {
		case <-in.proc.Done():
			return in
		default:
		}
	}
	return nil
}

const (
	// stopGrace is each service's time to shut down cleanly between
	// variants, in reverse start order.
	stopGrace = 5 * time.Second
	// interruptGrace is the whole deployment's time to finish in-flight
	// requests once the run is interrupted.
	interruptGrace = 2 * time.Second
)

// stop ends every process and removes the temporary files, in the
// reverse of the start order; it works with an already cancelled context,
// as it must on Ctrl-C.
func (d *Deployment) stop() error { return d.modules.stop() }

// instancesOf lists every instance of a service, or every process of a
// dependency.
func (d *Deployment) instancesOf(name string) []*instance {
	var out []*instance
	for _, in := range d.instances {
		if in.service == name {
			out = append(out, in)
		}
	}
	return out
}

// instance is the first instance of a service.
func (d *Deployment) instance(service string) *instance {
	for _, in := range d.instances {
		if in.service == service && !in.dep {
			return in
		}
	}
	return nil
}
