package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/deppod"
	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/kubedeploy"
	"github.com/msbench/msbench/internal/kubehosts"
	"github.com/msbench/msbench/internal/kubeload"
	"github.com/msbench/msbench/internal/linkpod"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
)

// Cluster is where a run deploys its variants when it is not this
// machine: a Kubernetes cluster, msbench's second backend. Everything the
// run creates there lives in one namespace of its own, deleted when the
// run ends (or by the next msbench's sweep after a SIGKILL).
type Cluster struct {
	Target kube.Target
	// Namespace names the run's namespace; "" names it after the run.
	Namespace string
	// Generators is how many pods a step's load is spread over (at least
	// one).
	Generators int
	// Registry is where the images are pushed; "" imports them into the
	// local cluster's containerd (msbench cluster up), which must be the
	// one Target names.
	Registry string
	// Bases are the images' bases per language and per dependency kind
	// (--base-image); one without keeps Debian's.
	Bases studyimage.Bases
}

// clusterLab is what a run's deployments on a cluster share: the
// namespace, the images, the generator pods, the usage sampler, and a
// client that reaches the services from msbench.
type clusterLab struct {
	opts      Cluster
	ns        *kube.Namespace
	images    map[string]string    // VARIANT/SERVICE → image reference
	depImages map[deps.Kind]string // dependency kind → image reference
	generator string               // the generator image's reference
	pool      *kubeload.Pool
	sampler   *kube.Sampler
	// probe reaches the cluster's addresses from msbench, for setup,
	// first requests, hooks and events.
	probe *http.Client
	desc  kube.Cluster
	// prov is the run's provenance of the cluster, where the deployments
	// record what the cluster granted their pods.
	prov *results.Cluster
	// local is the local cluster the images were imported into; nil when
	// they were pushed.
	local *cluster.Cluster
	// cpus are placement's cores per service as CPU requests and limits,
	// nil where the nodes cannot grant them all (limits only then).
	cpus map[string]float64
	// hosts are the nodes the study's hosts and the generators are bound
	// to; empty without hosts.
	hosts kubehosts.Assignment
	// refused says why the placement's cores were not asked for: the
	// nodes cannot grant them all; "" when they were, or none was placed.
	refused string
}

// clusterNetworks are where a generator may send: the nodes' pod ranges,
// and the Services' range, which the API does not give: taken as the /16
// around the API server's own Service (kubernetes.default), which holds
// the defaults of kubeadm (10.96.0.0/12), EKS, AKS and the local cluster.
func clusterNetworks(ctx context.Context, cs kubernetes.Interface) ([]netip.Prefix, error) {
	var out []netip.Prefix
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster networks: %w", err)
	}
	for _, n := range nodes.Items {
		for _, cidr := range n.Spec.PodCIDRs {
			if p, err := netip.ParsePrefix(cidr); err == nil {
				out = append(out, p)
			}
		}
	}
	api, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster networks: the API server's Service: %w", err)
	}
	ip, err := netip.ParseAddr(api.Spec.ClusterIP)
	if err != nil {
		return nil, fmt.Errorf("cluster networks: the API server's Service address %q: %w", api.Spec.ClusterIP, err)
	}
	bits := 16
	if ip.Is6() {
		bits = 112
	}
	services, _ := ip.Prefix(bits)
	return append(out, services), nil
}

// refuseOnCluster names what a study asks that a cluster cannot do, before
// anything starts: a pause (no freezer through the API), idle deployments
// frozen between slices, and addresses hard-coded to loopback.
func refuseOnCluster(s *study.Study) error {
	if err := kubedeploy.Check(s); err != nil {
		return err
	}
	var errs []error
	for _, st := range s.Load.Steps {
		for _, ev := range st.Events {
			if ev.Action == actPause || ev.Action == actResume {
				errs = append(errs, fmt.Errorf("%s: step %s: event %s %s: a cluster cannot pause a pod (no freezer through the API); run this step on this machine", s.File, st.Name, ev.Action, ev.Target))
			}
		}
	}
	if s.Interleave.Freeze {
		errs = append(errs, fmt.Errorf("%s: interleave: idle: freeze: a cluster cannot freeze the waiting deployments; use idle: run (msbench run --idle run)", s.File))
	}
	return errors.Join(errs...)
}

// openCluster readies the cluster for the run: the namespace, the images
// of every variant's services, dependencies and generators, the
// generator pods and the usage sampler. r.close takes it all back.
func (r *runner) openCluster(ctx context.Context) error {
	o := *r.opts.Cluster
	if err := refuseOnCluster(r.study); err != nil {
		return err
	}
	cs, err := o.Target.Client(0)
	if err != nil {
		return err
	}
	c := &clusterLab{opts: o}
	if c.desc, err = kube.Describe(ctx, cs); err != nil {
		return err
	}
	// Before anything is created: too few nodes for the hosts is refused.
	if c.hosts, err = kubehosts.Assign(ctx, cs, r.study.Hosts); err != nil {
		return fmt.Errorf("%s: %w", r.study.File, err)
	}
	if c.hosts.Summary != "" {
		r.logf("cluster: hosts: %s", c.hosts.Summary)
	}
	r.Lab.cluster = c
	if c.ns, err = kube.CreateNamespace(ctx, o.Target, filepath.Base(r.run.Dir), o.Namespace); err != nil {
		return err
	}
	r.logf("cluster: %s; namespace %s", c.desc, c.ns.Name)
	if err := c.buildImages(ctx, r); err != nil {
		return err
	}
	networks, err := clusterNetworks(ctx, cs)
	if err != nil {
		return err
	}
	genCPUs, err := c.grant(ctx, cs, r, max(1, o.Generators))
	if err != nil {
		return err
	}
	if c.pool, err = kubeload.Start(ctx, kubeload.Config{Namespace: c.ns, Image: c.generator, Generators: max(1, o.Generators), CPUs: genCPUs, Node: c.hosts.Generators, Networks: networks}); err != nil {
		return err
	}
	r.logf("cluster: %d generator pod(s) ready", len(c.pool.Pods()))
	c.sampler = kube.NewSampler(c.ns.Client(), c.ns.Name, time.Second)
	if err := c.sampler.Start(ctx); err != nil {
		return err
	}
	c.probe = &http.Client{Timeout: probeClient.Timeout, Transport: fetchTransport{c.pool}}
	prov := c.desc
	prov.Namespace, prov.Generators, prov.Images, prov.Accounting = c.ns.Name, len(c.pool.Pods()), maps.Clone(c.images), kube.Method
	prov.Hosts = c.hosts.Summary
	r.prov.Cluster = &prov
	c.prov = &prov
	r.prov.ResourceMethod = kube.Method
	for kind, ref := range c.depImages {
		r.prov.Cluster.Images["dependency "+string(kind)] = ref
	}
	r.prov.Cluster.Images["generator"] = c.generator
	return nil
}

// grant sets the services' CPUs from the study's placement (its cores
// per service as requests and limits, Guaranteed QoS) where the nodes can
// grant them all with the generators', and returns each generator's; a
// placement the nodes cannot grant is given as limits of nothing, with a
// warning, rather than leave pods unschedulable. What must fit at once is
// every variant's deployment where the run interleaves (they are all up
// through a repetition), else each one alone, with the generators, each
// pod on one node and a host's on its own.
func (c *clusterLab) grant(ctx context.Context, cs kubernetes.Interface, r *runner, generators int) (float64, error) {
	gen := float64(len(r.place.generator))
	cpus := map[string]float64{}
	for _, svc := range r.study.Services {
		if n := len(r.place.service(svc.Name)); n > 0 {
			cpus[svc.Name] = float64(n)
		}
	}
	if gen == 0 && len(cpus) == 0 {
		return 0, nil
	}
	nodes, err := kubehosts.Capacities(ctx, cs)
	if err != nil {
		return 0, fmt.Errorf("cluster: placement: %w", err)
	}
	var gens []kubehosts.Pod
	if gen > 0 {
		for i := range generators {
			gens = append(gens, kubehosts.Pod{Name: fmt.Sprintf("generator %d", i+1), CPUs: gen, Node: c.hosts.Generators})
		}
	}
	together := [][]study.Variant{r.study.Runs()}
	if !r.interleaves() {
		together = nil
		for _, v := range r.study.Runs() {
			together = append(together, []study.Variant{v})
		}
	}
	for _, group := range together {
		pods := slices.Clone(gens)
		for _, v := range group {
			for _, svc := range r.study.Services {
				if cpus[svc.Name] == 0 {
					continue
				}
				for i := range svc.Instances(v) {
					pods = append(pods, kubehosts.Pod{Name: fmt.Sprintf("%s's %s #%d", v.Key(), svc.Name, i+1), CPUs: cpus[svc.Name], Node: c.hosts.Services[svc.Name]})
				}
			}
		}
		if err := kubehosts.Fit(nodes, pods); err != nil {
			c.refused = fmt.Sprintf("the placement's CPUs cannot all be granted: %v: none reserved", err)
			r.logf("warning: cluster: %s or limited", c.refused)
			return 0, nil
		}
	}
	c.cpus = cpus
	r.logf("cluster: CPUs reserved and limited as the placement asks: %g per generator, services %v", gen, cpus)
	return gen, nil
}

// buildImages builds every image the run needs and makes the cluster hold
// them: imported into the local cluster's containerd, or pushed.
func (c *clusterLab) buildImages(ctx context.Context, r *runner) error {
	store := &image.Store{Dir: filepath.Join(r.opts.Root, ".cache", "images")}
	variants := r.study.Runs()
	specs, err := studyimage.Plan(r.study, variants, r.values)
	if err != nil {
		return err
	}
	start := time.Now()
	built, err := c.opts.Bases.Build(ctx, store, specs)
	if err != nil {
		return err
	}
	gen, err := studyimage.Generator(ctx, store, r.opts.Root)
	if err != nil {
		return err
	}
	all := append(slices.Clone(built), gen)
	c.depImages = map[deps.Kind]string{}
	for _, dep := range r.study.Deps {
		kind := deps.Kind(dep.Kind)
		if _, ok := c.depImages[kind]; ok {
			continue
		}
		b, err := deppod.BuildOn(ctx, store, r.opts.Root, kind, c.opts.Bases[string(kind)])
		if err != nil {
			return err
		}
		all = append(all, b)
		c.depImages[kind] = c.runRef(b)
	}
	r.logf("cluster: %d images built in %.1fs", len(all), time.Since(start).Seconds())
	if err := c.place(ctx, all); err != nil {
		return err
	}
	c.generator = c.runRef(gen)
	c.images = map[string]string{}
	for _, v := range variants {
		for _, svc := range r.study.Services {
			if b := studyimage.For(built, v.Key(), svc.Name); b != nil {
				c.images[v.Key()+"/"+svc.Name] = c.runRef(*b)
			}
		}
	}
	return nil
}

// runRef is what the run's pods name an image by: pushed, its repository
// in the registry by digest; imported into the local cluster, a name of
// the run's own under its namespace, so that the run (or, after a
// SIGKILL, the next msbench's sweep of its namespace) removes what it
// imported and nothing another run holds.
func (c *clusterLab) runRef(b studyimage.Built) string {
	if c.opts.Registry != "" {
		return c.repository(b) + "@" + b.Image.Digest.String()
	}
	return studyimage.Registry + "/" + c.ns.Name + "/" + strings.TrimPrefix(b.Ref, studyimage.Registry+"/")
}

// repository is an image's repository in the registry: the registry's
// path and the image's name.
func (c *clusterLab) repository(b studyimage.Built) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(b.Ref, studyimage.Registry+"/"), ":")
	return strings.TrimSuffix(c.opts.Registry, "/") + "/" + name
}

// SweepImages removes from the local cluster (if one is up) the images
// that the runs of the namespaces given imported: what a run killed too
// hard to remove them left, once the sweep has taken its namespace.
func SweepImages(ctx context.Context, runs []kube.Run) error {
	var errs []error
	for _, run := range runs {
		local, err := localCluster(run.Target)
		if err != nil {
			continue // no local cluster: nothing was imported into one that still runs
		}
		if _, err := local.RemoveImages(ctx, localImagePrefix(run.Namespace)); err != nil {
			errs = append(errs, fmt.Errorf("images of run %s: %w", run.Namespace, err))
		}
	}
	return errors.Join(errs...)
}

// localCluster is the local cluster (msbench cluster up) that target's
// kubeconfig reaches: the one whose state directory holds it, or the
// default one.
func localCluster(target kube.Target) (*cluster.Cluster, error) {
	if c, err := cluster.Open(filepath.Dir(target.Kubeconfig)); err == nil {
		return c, nil
	}
	return cluster.Open(cluster.DefaultStateDir())
}

// localImagePrefix is the start of the names of the images a run in
// namespace ns imported into the local cluster.
func localImagePrefix(ns string) string { return studyimage.Registry + "/" + ns + "/" }

// place makes the cluster hold the images: pushed to the registry, or
// imported into the local cluster.
func (c *clusterLab) place(ctx context.Context, built []studyimage.Built) error {
	if c.opts.Registry != "" {
		return c.push(ctx, built)
	}
	local, err := localCluster(c.opts.Target)
	if err != nil {
		return fmt.Errorf("cluster: images are imported into the local cluster (msbench cluster up) when no --registry is given: %w", err)
	}
	dir, err := os.MkdirTemp("", "msbench-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c.local = local
	for _, b := range built {
		b.Ref = c.runRef(b)
		archive, err := b.WriteArchive(dir)
		if err != nil {
			return err
		}
		if err := local.ImportImage(ctx, archive); err != nil {
			return fmt.Errorf("cluster: import %s: %w", b.Ref, err)
		}
		os.Remove(archive)
	}
	return nil
}

// accounting says how the run accounts its services' CPU and memory.
func (l *Lab) accounting() string {
	if l.cluster != nil {
		return kube.Method
	}
	return l.acct.Method()
}

// push writes every image to the registry, tagged with its digest's
// start, with the credentials the machine's Docker config gives for it (a
// registry on this machine or the RFC 1918 ranges is spoken to over
// plain HTTP, as go-containerregistry does).
func (c *clusterLab) push(ctx context.Context, built []studyimage.Built) error {
	for _, b := range built {
		tag := c.repository(b) + ":" + b.Image.Digest.Hex[:12]
		ref, err := name.ParseReference(tag)
		if err != nil {
			return fmt.Errorf("cluster: --registry %s: %w", c.opts.Registry, err)
		}
		if err := b.Image.Push(ctx, ref, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	return nil
}

// closeCluster takes back what openCluster made, the namespace last; it
// works after the run's context is cancelled.
func (c *clusterLab) close() error {
	var errs []error
	if c.pool != nil {
		errs = append(errs, c.pool.Stop())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if c.sampler != nil {
		if err := c.sampler.Stop(ctx); err != nil && !strings.Contains(err.Error(), "stopped before it started") {
			errs = append(errs, err)
		}
	}
	if c.ns != nil {
		errs = append(errs, c.ns.Delete(ctx))
	}
	if c.local != nil {
		_, err := c.local.RemoveImages(ctx, localImagePrefix(c.ns.Name))
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// clusterDeployment is what a Deployment on a cluster holds besides what
// every Deployment does: its services' pods and its dependencies' pods.
type clusterDeployment struct {
	lab      *clusterLab
	study    *study.Study
	services *kubedeploy.Deployment
	deps     []clusterDep
	links    []clusterLink
	scope    string
}

// clusterDep is a dependency's pod, by the study's name of it (the pod's
// objects carry the deployment's scope too).
type clusterDep struct {
	name   string
	pod    *deppod.Pod
	killed bool // by a kill event: a restart starts a new pod
}

// clusterLink is one link of the study on a cluster: a link pod in front
// of each instance of its To.
type clusterLink struct {
	link *study.Link
	pods []*linkpod.Link
}

// startLinks starts a link pod in front of every instance of each link's
// To (a Service's address, or a dependency's), once values has their
// addresses, and returns what each dialer is told instead.
func (cd *clusterDeployment) startLinks(ctx context.Context, values map[string]string) (map[string]map[string]string, error) {
	dial := map[string]map[string]string{}
	for _, l := range cd.study.Links {
		spec, err := l.Spec(values)
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		dep := cd.dependency(l.To)
		upstreams := strings.Split(values["service."+l.To+".addrs"], ",")
		if dep != nil {
			upstreams = []string{dep.pod.Values()["addr"]}
		}
		cl := clusterLink{link: l}
		for i, up := range upstreams {
			name := cd.scope + l.Name()
			if i > 0 {
				name += "-" + strconv.Itoa(i)
			}
			p, err := linkpod.Deploy(ctx, cd.lab.ns, name, spec, up, cd.lab.generator)
			if err != nil {
				cd.links = append(cd.links, cl)
				return nil, fmt.Errorf("deploy: %w", err)
			}
			cl.pods = append(cl.pods, p)
		}
		cd.links = append(cd.links, cl)
		if l.From == study.Generator {
			continue
		}
		if dial[l.From] == nil {
			dial[l.From] = map[string]string{}
		}
		addrs := make([]string, len(cl.pods))
		for i, p := range cl.pods {
			addrs[i] = p.Addr()
		}
		if dep != nil {
			throughDep(dial[l.From], dep.name, dep.pod.Values(), upstreams[0], addrs[0])
			continue
		}
		prefix := "service." + l.To + "."
		dial[l.From][prefix+"addr"] = addrs[0]
		dial[l.From][prefix+"addrs"] = strings.Join(addrs, ",")
		_, dial[l.From][prefix+"port"], _ = net.SplitHostPort(addrs[0])
	}
	return dial, nil
}

func (cd *clusterDeployment) stopLinks() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	for _, l := range cd.links {
		for _, p := range l.pods {
			errs = append(errs, p.Stop(ctx))
		}
	}
	cd.links = nil
	return errors.Join(errs...)
}

func (cd *clusterDeployment) dependency(name string) *clusterDep {
	for i := range cd.deps {
		if cd.deps[i].name == name {
			return &cd.deps[i]
		}
	}
	return nil
}

// loadAddr is where the load's requests to service go: through the
// generator's link pod when the study has one.
func (cd *clusterDeployment) loadAddr(service string) string {
	for _, l := range cd.links {
		if l.link.From == study.Generator && l.link.To == service && len(l.pods) > 0 {
			return l.pods[0].Addr()
		}
	}
	return cd.services.Addr(service)
}

// linkFault injects an event's fault into every pod of its link.
func (cd *clusterDeployment) linkFault(ev *study.Event) error {
	for _, l := range cd.links {
		if l.link.Name() != ev.Target {
			continue
		}
		var errs []error
		for _, p := range l.pods {
			errs = append(errs, p.SetFault(context.Background(), links.Fault(ev.Fault), ev.Delay))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("no link %s", ev.Target)
}

// deploy starts variant c.variant on the cluster: its
// dependencies as pods, then its services (with their links), then the
// sampler, each module stopped in reverse on error or Stop.
func (l *clusterLab) deploy(ctx context.Context, c deployConfig) (*Deployment, error) {
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	d := &Deployment{ctx: ctx, cfg: c, sampler: resources.NewSampler(0), pods: &clusterDeployment{lab: l, study: c.study, scope: kubeScope(c.scope)}}
	return d.launch(ctx,
		feature{d.startDependencyPods, d.stopDependencyPods},
		feature{d.startServicePods, d.stopServicePods},
		feature{d.startSampler, d.stopSampler},
	)
}

// startDependencyPods runs every dependency of the study in a pod of its
// own and publishes its values as {dep.NAME.KEY}.
func (d *Deployment) startDependencyPods(ctx context.Context, values map[string]string) error {
	cd := d.pods
	for _, dep := range d.cfg.study.Deps {
		started := time.Now()
		p, err := deppod.Deploy(ctx, cd.lab.ns, cd.scope+dep.Name, deps.Kind(dep.Kind), cd.lab.depImages[deps.Kind(dep.Kind)], dep.Limits)
		if err != nil {
			return fmt.Errorf("deploy: %w", err)
		}
		cd.deps = append(cd.deps, clusterDep{name: dep.Name, pod: p})
		for k, v := range p.Values() {
			values["dep."+dep.Name+"."+k] = v
		}
		in := &instance{name: dep.Name, service: dep.Name, dep: true, started: started, ready: time.Now()}
		in.proc = &podProcess{name: dep.Name, log: filepath.Join(d.cfg.logDir, dep.Name+".log")}
		in.tracked = &podTracked{name: dep.Name, sampler: cd.lab.sampler, pods: []string{p.PodName()}, container: deppod.Container, current: func(string) string { return p.PodName() }}
		d.instances = append(d.instances, in)
		d.sampler.Add(in.tracked)
		d.cfg.progress("  started dependency %s (%s) in pod %s", dep.Name, dep.Kind, p.PodName())
	}
	return nil
}

func (d *Deployment) stopDependencyPods() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	for _, p := range slices.Backward(d.pods.deps) {
		errs = append(errs, p.pod.Stop(ctx))
	}
	d.pods.deps = nil
	return errors.Join(errs...)
}

// startServicePods starts every service the variant runs as pods behind
// Services of their own, and accounts each instance through the sampler.
func (d *Deployment) startServicePods(ctx context.Context, values map[string]string) error {
	cd, c := d.pods, d.cfg
	images := map[string]string{}
	for _, svc := range c.study.Services {
		images[svc.Name] = cd.lab.images[c.variant.Key()+"/"+svc.Name]
	}
	var err error
	cd.services, err = kubedeploy.Deploy(ctx, kubedeploy.Config{
		Namespace: cd.lab.ns,
		Study:     c.study,
		Variant:   c.variant,
		Values:    values,
		Secrets:   kubedeploy.Secrets(values),
		Images:    images,
		CPUs:      cd.lab.cpus,
		Nodes:     cd.lab.hosts.Services,
		Scope:     cd.scope,
		LogDir:    c.logDir,
		Progress:  c.progress,
		Links:     cd.startLinks,
	})
	if err != nil {
		return err
	}
	maps.Copy(values, cd.services.Values())
	if err := cd.reachable(ctx); err != nil {
		return err
	}
	for _, svc := range c.study.StartOrder() {
		cd.lab.granted(svc.Name, cd.services.Instances(svc.Name))
		for _, ki := range cd.services.Instances(svc.Name) {
			in := &instance{name: ki.Name, service: svc.Name, addr: ki.Addr, started: ki.Started, ready: ki.Ready, svc: svc}
			in.proc = &podProcess{name: ki.Name, log: filepath.Join(c.logDir, ki.Name+".log"), crashed: cd.crashed}
			in.tracked = &podTracked{name: ki.Name, sampler: cd.lab.sampler, pods: []string{ki.Pod}, container: ki.Container, current: cd.currentPod}
			d.instances = append(d.instances, in)
			d.sampler.Add(in.tracked)
		}
	}
	return nil
}

func (d *Deployment) stopServicePods() error {
	var err error
	if d.pods.services != nil {
		err = d.pods.services.Stop()
	}
	return errors.Join(err, d.pods.stopLinks())
}

// reachWait bounds how long a ready instance's Service may refuse
// connections: kube-proxy writes a new Service's rules on its own
// schedule, after the pod is ready.
const reachWait = 30 * time.Second

// reachable returns once every instance answers on its Service's address
// from a generator pod, as the load will reach it: any answer will do,
// a refused connection is waited out.
func (cd *clusterDeployment) reachable(ctx context.Context) error {
	for _, svc := range cd.study.Services {
		for _, in := range cd.services.Instances(svc.Name) {
			deadline := time.Now().Add(reachWait)
			for {
				_, _, _, err := cd.lab.pool.Fetch(ctx, http.MethodGet, "http://"+in.Addr+"/", nil, nil)
				if err == nil || !strings.Contains(err.Error(), "connection refused") {
					break
				}
				if time.Now().After(deadline) || ctx.Err() != nil {
					return fmt.Errorf("deploy %s: its Service %s refused connections for %s after the pod was ready: %w", in.Name, in.Addr, reachWait, err)
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	return nil
}

// granted records, once per service, what the cluster gave its pods
// against what the placement asked.
func (l *clusterLab) granted(service string, ins []kubedeploy.Instance) {
	if len(ins) == 0 || l.prov == nil {
		return
	}
	if l.prov.Granted == nil {
		l.prov.Granted = map[string]string{}
	}
	if _, ok := l.prov.Granted[service]; ok {
		return
	}
	asked := "no CPU placed"
	if n, ok := l.cpus[service]; ok {
		asked = fmt.Sprintf("%g CPU requested and limited", n)
	} else if l.refused != "" {
		asked = l.refused
	}
	l.prov.Granted[service] = fmt.Sprintf("QoS %s (%s)", orNone(ins[0].QoS), asked)
}

// statsWait bounds the wait for the kubelets' stats to pass a load's end.
const statsWait = 30 * time.Second

// fresh returns once the kubelets' stats of the deployment's containers
// are from t or later, so that a usage read then counts all a load used.
func (cd *clusterDeployment) fresh(ctx context.Context, t time.Time) error {
	var cs []kube.Container
	for _, svc := range cd.study.Services {
		for _, in := range cd.services.Instances(svc.Name) {
			if in.Pod != "" {
				cs = append(cs, kube.Container{Pod: in.Pod, Name: in.Container})
			}
		}
	}
	for _, d := range cd.deps {
		cs = append(cs, kube.Container{Pod: d.pod.PodName(), Name: deppod.Container})
	}
	return cd.lab.sampler.Await(ctx, t, statsWait, cs...)
}

// kubeScope is a deployment's scope as a Kubernetes name's prefix.
func kubeScope(scope string) string { return strings.ToLower(scope) }

// crashed reports whether an instance ended on its own.
func (cd *clusterDeployment) crashed(name string) (bool, string) {
	in, ok := cd.services.Crashed()
	if !ok || in.Name != name {
		return false, ""
	}
	return true, "its pod " + orNone(in.Pod) + " ended or was restarted"
}

// currentPod is the pod an instance runs in now: a restart replaces it.
func (cd *clusterDeployment) currentPod(name string) string {
	for _, svc := range cd.study.Services {
		for _, in := range cd.services.Instances(svc.Name) {
			if in.Name == name {
				return in.Pod
			}
		}
	}
	return ""
}

// act carries out an event on a pod: kill and restart of a service's
// instances or of a dependency (pause is refused before the run).
func (cd *clusterDeployment) act(ctx context.Context, action, target string) error {
	if dep := cd.dependency(target); dep != nil {
		switch {
		case action == actKill:
			dep.killed = true
			return dep.pod.Kill(ctx)
		case action == actRestart && dep.killed:
			dep.killed = false
			return dep.pod.Start(ctx)
		case action == actRestart:
			_, err := dep.pod.Restart(ctx)
			return err
		}
		return fmt.Errorf("%s %s: not possible on a cluster", action, target)
	}
	switch action {
	case actKill:
		return cd.services.Kill(target)
	case actRestart:
		return cd.services.Restart(ctx, target)
	}
	return fmt.Errorf("%s %s: not possible on a cluster", action, target)
}

// podProcess is an instance in a pod, as the deployment's code about
// processes sees it: the events act through clusterDeployment.act, and
// the API reports how it ended.
type podProcess struct {
	name    string
	log     string
	crashed func(name string) (bool, string)
	why     string
}

var errOnCluster = errors.New("not possible on a cluster's pod")

func (p *podProcess) Pid() int        { return 0 }
func (p *podProcess) LogPath() string { return p.log }

// Done is closed when the instance has ended on its own, as the API says
// at the call.
func (p *podProcess) Done() <-chan struct{} {
	ch := make(chan struct{})
	if p.crashed != nil {
		if gone, why := p.crashed(p.name); gone {
			p.why = why
			close(ch)
		}
	}
	return ch
}

func (p *podProcess) ExitErr() error {
	if p.why == "" {
		return nil
	}
	return errors.New(p.why)
}

func (p *podProcess) Pause() error                                        { return errOnCluster }
func (p *podProcess) Resume() error                                       { return errOnCluster }
func (p *podProcess) Kill() error                                         { return errOnCluster }
func (p *podProcess) Crash() error                                        { return errOnCluster }
func (p *podProcess) Stop(ctx context.Context, grace time.Duration) error { return errOnCluster }
func (p *podProcess) Stopping() proc.Stopping                             { return proc.Stopping{} }

// podTracked accounts an instance's containers through the kubelet's
// stats (kube.Sampler): its CPU over every pod it has run in (a restart
// replaces the pod), its peak memory since ResetPeak.
type podTracked struct {
	name      string
	sampler   *kube.Sampler
	container string
	pods      []string
	current   func(name string) string // nil: it keeps its pod
}

func (t *podTracked) Name() string { return t.name }

func (t *podTracked) Usage() (resources.Usage, error) {
	if t.current != nil {
		if pod := t.current(t.name); pod != "" && !slices.Contains(t.pods, pod) {
			t.pods = append(t.pods, pod)
		}
	}
	var u resources.Usage
	var errs []error
	for _, pod := range t.pods {
		k, err := t.sampler.Usage(pod, t.container)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The Summary API gives CPU as one figure: counted as user time.
		u.UserSec += k.CPUSeconds
		u.PeakMemBytes = max(u.PeakMemBytes, int64(k.PeakMemoryBytes))
	}
	if len(errs) == len(t.pods) {
		return u, fmt.Errorf("usage of %s: %w", t.name, errors.Join(errs...))
	}
	return u, nil
}

func (t *podTracked) ResetPeak() error {
	for _, pod := range t.pods {
		t.sampler.ResetPeak(pod, t.container)
	}
	return nil
}

func (t *podTracked) Move(placement.CPUs) error { return errOnCluster }
func (t *podTracked) Close() error              { return nil }

// fetchTransport sends msbench's own requests to the cluster (setup,
// first requests, hooks, events) from a generator pod, which reaches its
// addresses as the load does.
type fetchTransport struct{ pool *kubeload.Pool }

func (f fetchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	status, header, out, err := f.pool.Fetch(req.Context(), req.Method, req.URL.String(), req.Header, body)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       req,
	}, nil
}

// loadFromPods sends a load from the run's generator pods, spread over
// them and merged exactly (kubeload), and keeps what a load from msbench
// keeps: its summary and, for a measured piece, its records as segment
// seg of the step's file.
func (m *measurement) loadFromPods(ctx context.Context, spec loadspec.Spec, seg *records.Segment, progress func(load.Snapshot)) (metrics.Summary, error) {
	work, err := os.MkdirTemp(m.dep.cfg.tmpRoot, "load-")
	if err != nil {
		return metrics.Summary{}, err
	}
	defer os.RemoveAll(work)
	merged, err := m.dep.pods.lab.pool.Run(ctx, spec, work, progress)
	if err != nil {
		if ctx.Err() != nil {
			return metrics.Summary{}, ErrInterrupted
		}
		return metrics.Summary{}, err
	}
	if seg != nil {
		if err := merged.WriteRecords(m.records, *seg); err != nil {
			return metrics.Summary{}, err
		}
		m.generatorsCPU = 0
		for _, g := range merged.Generators {
			m.generatorsCPU += g.GeneratorCPUS
		}
	}
	return merged.Summary, nil
}

// onCluster is the noise audit's input for a piece measured on a cluster:
// what the generators' saturation and the rate need. This machine's
// /proc/stat says nothing of a remote node, and the kubelet's stats have
// no steal and refresh the node's CPU every 10 s, so steal and foreign
// CPU are not judged there (the step's summary says so).
func onCluster(w results.AuditInput, runCPU float64) results.AuditInput {
	return results.AuditInput{RunCPUS: runCPU, MsbenchCPUS: w.MsbenchCPUS, WindowS: w.WindowS, Windows: w.Windows}
}
