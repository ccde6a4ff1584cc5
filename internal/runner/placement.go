package runner

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// cpuPlan is where every process of a run goes: the study's placement
// resolved on this machine's cores.
type cpuPlan struct {
	asked     string // results.PlacementDefault, PlacementNone or PlacementStudy
	available placement.CPUs
	generator placement.CPUs // nil: not placed
	rest      placement.CPUs // what a service or dependency the study does not name gets
	services  map[string]placement.CPUs
	deps      map[string]placement.CPUs
	study     *study.Placement // nil when the study gives none
	cpuset    bool             // the accountant keeps services on their cores by cgroup cpuset
	// home is the plan a deployment booting on lent cores (lent) settles
	// in: its services are not where they will run, and nothing is
	// recorded of them; its dependencies are, and are recorded there.
	home      *cpuPlan
	lentCores placement.CPUs // where lent boots the services
	warnings  []string       // placements that undo what the study asks elsewhere

	mu       sync.Mutex
	placed   map[string]results.PlacedProcess // kind/name → the first one seen
	order    []string
	bootLent placement.CPUs // the lent cores once a deployment booted there
}

// planPlacement resolves a study's placement on the cores available: the
// default gives the generator the first core and the services and
// dependencies the others, on two cores or more. A core the machine lacks
// is an error that names it.
func planPlacement(s *study.Study, available placement.CPUs, cpuset bool) (*cpuPlan, error) {
	p := &cpuPlan{
		asked:     results.PlacementDefault,
		available: available,
		services:  map[string]placement.CPUs{},
		deps:      map[string]placement.CPUs{},
		study:     s.Placement,
		cpuset:    cpuset,
		placed:    map[string]results.PlacedProcess{},
	}
	sp := s.Placement
	if sp != nil && sp.None {
		p.asked = results.PlacementNone
		return p, nil
	}
	if len(available) >= 2 {
		p.generator = available[:1]
	}
	if sp != nil {
		p.asked = results.PlacementStudy
		var err error
		if p.generator, err = resolveCores(sp.Generator, p.generator, "placement.generator"); err != nil {
			return nil, err
		}
	}
	if p.generator != nil {
		if rest := available.Minus(p.generator); len(rest) > 0 {
			p.rest = rest
		}
	}
	for _, svc := range s.Services {
		asked := ""
		if sp != nil {
			asked = sp.Services[svc.Name]
		}
		cpus, err := resolveCores(asked, p.rest, "placement.services."+svc.Name)
		if err != nil {
			return nil, err
		}
		p.services[svc.Name] = cpus
		p.check("service "+svc.Name, cpus, svc.Limits.CPUs)
	}
	for _, dep := range s.Deps {
		asked := ""
		if sp != nil {
			asked = sp.Dependencies[dep.Name]
		}
		cpus, err := resolveCores(asked, p.rest, "placement.dependencies."+dep.Name)
		if err != nil {
			return nil, err
		}
		p.deps[dep.Name] = cpus
		p.check("dependency "+dep.Name, cpus, dep.Limits.CPUs)
	}
	return p, nil
}

// check warns of a process placed with the generator, which it then
// competes with, or on fewer cores than its CPU cap allows it. A process
// on every core (nil) shares the generator's too.
func (p *cpuPlan) check(what string, cpus placement.CPUs, limit float64) {
	on := cpus
	if on == nil {
		on = p.available
	}
	if shared := p.generator.Intersect(on); len(shared) > 0 {
		p.warnings = append(p.warnings, fmt.Sprintf("%s shares core(s) %s with the generator: the generator waits for it at every request it sends or reads, and so do the link proxies it runs", what, shared))
	}
	if n := len(cpus); cpus != nil && limit > float64(n) {
		p.warnings = append(p.warnings, fmt.Sprintf("%s is capped at %g CPUs but placed on %d core(s) (%s): the placement, not the cap, bounds it", what, limit, n, cpus))
	}
}

// resolveCores reads one value of a study's placement: "" takes def, "all"
// places nowhere in particular (nil).
func resolveCores(asked string, def placement.CPUs, field string) (placement.CPUs, error) {
	switch asked {
	case "":
		return def, nil
	case study.PlacementAll:
		return nil, nil
	}
	c, err := placement.Parse(asked)
	if err == nil {
		err = placement.Check(c)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", field, asked, err)
	}
	return c, nil
}

// lent is where a deployment may boot while another boots at home
// (nothing is measured while a repetition deploys): on the cores no
// service lives on (the generator's where it has its own, idle then),
// each service on as many of them as it has of its own, so that what
// sizes itself by its cores at start (a JVM's collector and compiler
// threads, GOMAXPROCS, Node's pool) counts the cores it will run on. Its
// dependencies start at home, where they stay (a dependency restarts
// where it started), and Deployment.settle moves the services there once
// ready. Nil where that cannot hold: no cpuset to move a whole service
// with, a service on every core, or fewer such cores than a service has.
func (p *cpuPlan) lent() *cpuPlan {
	if p == nil || !p.cpuset || len(p.services) == 0 {
		return nil
	}
	spare := p.available
	for _, home := range p.services {
		if home == nil {
			return nil
		}
		spare = spare.Minus(home)
	}
	homes := p.available.Minus(spare)
	boot := map[string]placement.CPUs{}
	for name, home := range p.services {
		var on placement.CPUs
		for _, c := range home {
			i := slices.Index(homes, c)
			if i < 0 || i >= len(spare) {
				return nil
			}
			on = append(on, spare[i])
		}
		slices.Sort(on)
		boot[name] = on
	}
	return &cpuPlan{asked: p.asked, available: p.available, generator: p.generator, rest: p.rest,
		services: boot, deps: p.deps, study: p.study, cpuset: p.cpuset, home: p, lentCores: spare}
}

// settle moves the services of a deployment booted on lent cores to
// their own (home), where they restart from then on too; its
// dependencies started there.
func (d *Deployment) settle(home *cpuPlan) error {
	lent := d.cfg.place.lentCores
	for _, in := range d.instances {
		if in.dep {
			continue
		}
		if err := in.tracked.Move(home.service(in.service)); err != nil {
			return err
		}
		home.started(results.PlacedService, in.service, in.proc.Pid())
	}
	d.cfg.place = home
	home.mu.Lock()
	home.bootLent = lent
	home.mu.Unlock()
	return nil
}

// service and dependency say where a process goes; nil: every core.
// A nil plan places nothing.
func (p *cpuPlan) service(name string) placement.CPUs {
	if p == nil {
		return nil
	}
	return p.services[name]
}

func (p *cpuPlan) dependency(name string) placement.CPUs {
	if p == nil {
		return nil
	}
	return p.deps[name]
}

// placeSelf puts msbench, which is the generator, on its cores; restore
// undoes it.
func (p *cpuPlan) placeSelf() (restore func() error, err error) {
	if p.generator == nil {
		p.record(results.PlacedGenerator, results.PlacedGenerator, "", nil, os.Getpid())
		return func() error { return nil }, nil
	}
	restore, err = placement.Self(p.generator)
	if err != nil {
		return nil, fmt.Errorf("place the generator on cores %s: %w", p.generator, err)
	}
	asked := ""
	if p.study != nil {
		asked = p.study.Generator
	}
	p.record(results.PlacedGenerator, results.PlacedGenerator, asked, p.generator, os.Getpid())
	return restore, nil
}

// started records where a started service or dependency process runs, read
// back from the kernel; the first process of each name is what
// provenance.json keeps.
func (p *cpuPlan) started(kind, name string, pid int) {
	if p != nil && p.home != nil {
		if kind != results.PlacedDependency {
			return
		}
		p = p.home
	}
	if p == nil {
		return
	}
	asked, cpus := "", p.services[name]
	if kind == results.PlacedDependency {
		cpus = p.deps[name]
	}
	if p.study != nil {
		if kind == results.PlacedDependency {
			asked = p.study.Dependencies[name]
		} else {
			asked = p.study.Services[name]
		}
	}
	p.record(kind, name, asked, cpus, pid)
}

func (p *cpuPlan) record(kind, name, asked string, cpus placement.CPUs, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := kind + "/" + name
	if _, seen := p.placed[key]; seen {
		return
	}
	method := placement.MethodNone
	switch {
	case cpus != nil && kind != results.PlacedGenerator && p.cpuset:
		method = placement.MethodCpuset
	case cpus != nil:
		method = placement.MethodAffinity
	}
	pp := results.PlacedProcess{Name: name, Kind: kind, Asked: asked, CPUs: cpus.String(), Method: method}
	if got, err := placement.Allowed(pid); err == nil {
		pp.Applied = got.String()
	} else {
		pp.Applied = "unknown: " + err.Error()
	}
	p.placed[key] = pp
	p.order = append(p.order, key)
}

// provenance is what provenance.json records: what was asked and what was
// applied to each process, in the order they were placed.
func (p *cpuPlan) provenance() *results.Placement {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := &results.Placement{Asked: p.asked, Available: p.available.String(), BootLent: p.bootLent.String()}
	for _, k := range p.order {
		out.Processes = append(out.Processes, p.placed[k])
	}
	return out
}

// String says in a line where things go, for the run's log.
func (p *cpuPlan) String() string {
	if p.generator == nil && p.rest == nil && len(p.placedCores()) == 0 {
		return fmt.Sprintf("none (%s; every process may use cores %s)", p.asked, p.available)
	}
	where := func(c placement.CPUs) string {
		if c == nil {
			return "every core"
		}
		return "cores " + c.String()
	}
	method := placement.MethodAffinity
	if p.cpuset {
		method = placement.MethodCpuset
	}
	s := fmt.Sprintf("%s: generator on %s (%s)", p.asked, where(p.generator), placement.MethodAffinity)
	for _, name := range sortedKeys(p.services) {
		s += fmt.Sprintf(", %s on %s", name, where(p.services[name]))
	}
	for _, name := range sortedKeys(p.deps) {
		s += fmt.Sprintf(", %s on %s", name, where(p.deps[name]))
	}
	return s + " (" + method + ")"
}

func (p *cpuPlan) placedCores() []placement.CPUs {
	var out []placement.CPUs
	for _, m := range []map[string]placement.CPUs{p.services, p.deps} {
		for _, c := range m {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func sortedKeys(m map[string]placement.CPUs) []string {
	return slices.Sorted(maps.Keys(m))
}
