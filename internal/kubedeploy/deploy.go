// Package kubedeploy starts one variant's services on a Kubernetes
// cluster, the cluster backend's counterpart of internal/runner's local
// Deployment: every instance (replica) of every service the variant runs
// is a ReplicaSet of one pod behind a ClusterIP Service of its own, whose
// address is known before any pod starts (so a service can be told where
// one that starts after it will be) and survives the pod's replacement.
// A pod binds its own address ({addr}, {host}), runs the study's command
// unchanged in an image that holds its files at the same paths
// (internal/studyimage), and is ready when the study's readiness check
// passes. Dependencies and links are the caller's: it gives their
// placeholders (dep.NAME.KEY) and the addresses a link puts on the path
// (Config.Dial). The values it is told are secret (Config.Secrets) reach
// the pods through a Secret of the deployment's, never in their specs.
package kubedeploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
)

// Config is what Deploy starts.
type Config struct {
	Namespace *kube.Namespace // the run's, already created
	Study     *study.Study
	Variant   study.Variant
	// Values are the lab's placeholders: root (the repository, where the
	// images hold the study's files), data, build.NAME, dataset.NAME,
	// dep.NAME.KEY, ...
	Values map[string]string
	// Secrets are values that must never appear in a manifest, nor in an
	// error or a saved log of the deployment's: the runner passes every
	// dependency's password and every token's key and token (Secrets
	// picks them from Values). Wherever one occurs in a service's
	// command or environment once expanded, even inside another value
	// (a dependency's url holds its password), the pod's spec names the
	// variable MSBENCH_SECRET_N instead, which the kubelet fills in from
	// the deployment's Secret (one per deployment, deleted by Stop and
	// with the namespace). A readiness check's URL cannot hold one.
	// Redaction in logs is line by line: a secret is a single line.
	Secrets []string
	Images  map[string]string // service name → image reference the nodes can run
	// CPUs are placement's cores per service: requests equal to limits
	// (Guaranteed QoS where the study caps memory too); a service absent
	// has the study's limits alone, nothing reserved.
	CPUs map[string]float64
	// Nodes binds each service's pods to a node (service → node name,
	// kubehosts.Assignment.Services): a study's hosts on a cluster. A
	// service absent goes wherever the scheduler puts it.
	Nodes map[string]string
	// Dial gives a service other placeholders than Values: dialer service
	// → placeholder → value, e.g. a link's proxy for gateway:
	// {"gateway": {"service.rpc.addr": PROXY, "service.rpc.addrs": PROXY,
	// "service.rpc.port": PORT}}. The variant's attributes are expanded
	// again with them.
	Dial map[string]map[string]string
	// Links, when set, is called once every Service exists (values has
	// their addresses) and before any pod starts: it starts the study's
	// links in front of them and returns what each dialer is told
	// instead (Dial's form, which it replaces).
	Links func(ctx context.Context, values map[string]string) (map[string]map[string]string, error)
	// Scope prefixes the names of the objects it creates, so that several
	// deployments share a namespace at once (interleaved steps); "" for
	// one at a time.
	Scope string
	// LogDir receives each instance's output as NAME.log: every pod it
	// ran, copied as it ends (Kill, Restart, Terminate, Stop). "" keeps
	// none.
	LogDir   string
	Progress func(format string, args ...any) // nil: silent
}

// Instance is one replica of a service.
type Instance struct {
	Name    string // service, or service-N for replicas after the first
	Service string
	Addr    string // its Service's ClusterIP:Port, which its dialers get
	// Pod and Container name it for the accounting (kube.Sampler); Pod is
	// "" while it is killed.
	Pod       string
	Container string
	// Started is when its pod was asked for (Deploy or Restart), Ready
	// when its readiness check was seen passing.
	Started, Ready time.Time
	// QoS is the class the cluster granted its pod (Guaranteed, Burstable,
	// BestEffort), for the report to state.
	QoS string
}

type instance struct {
	Instance
	object  string // its Service's and ReplicaSet's name
	faulted bool   // down on purpose (Kill, Terminate)
}

// Deployment is one variant's services running on the cluster.
type Deployment struct {
	// mu guards the instances' state (Instance, faulted), which Crashed
	// and Instances may read while a fault changes it.
	mu        sync.Mutex
	c         Config
	cs        kubernetes.Interface
	ns        string
	values    map[string]string
	instances []*instance // in start order
	// What Stop deletes; each is removed from here once gone, so a
	// second Stop retries only what the first could not.
	replicaSets []*instance
	services    []string
	secret      string // the Secret's name, "" when none is left

	secrets  []string        // Config.Secrets as secretList numbers them
	withheld kube.Withholder // secrets out of errors and saved logs
}

// Timeouts for a busy machine: a Service and its first pod are the API's
// and the kubelet's work; apiWait bounds a request, goneWait a pod's end
// after its grace.
const (
	apiWait  = 20 * time.Second
	goneWait = time.Minute
	stopWait = 3 * time.Minute
	pollGap  = 250 * time.Millisecond
)

// Deploy starts every instance of every service the variant runs, in the
// study's start order, each once ready. It refuses a study Check refuses.
// On error nothing it created is left.
func Deploy(ctx context.Context, c Config) (*Deployment, error) {
	if c.Namespace == nil || c.Study == nil {
		return nil, errors.New("deploy on a cluster: no namespace or study")
	}
	if err := Check(c.Study); err != nil {
		return nil, err
	}
	if c.Progress == nil {
		c.Progress = func(string, ...any) {}
	}
	d := &Deployment{c: c, cs: c.Namespace.Client(), ns: c.Namespace.Name, secrets: secretList(c.Secrets)}
	d.withheld = kube.NewWithholder(d.secrets...)
	values := maps.Clone(c.Values)
	if values == nil {
		values = map[string]string{}
	}
	maps.Copy(values, c.Study.Placeholders(c.Variant))
	var err error
	if len(d.secrets) > 0 {
		err = d.createSecret(ctx)
	}
	if err == nil {
		err = d.createServices(ctx, values)
	}
	if err == nil && c.Links != nil {
		// The links lead to the Services, and the pods are told the links.
		d.c.Dial, err = c.Links(ctx, maps.Clone(values))
	}
	if err == nil {
		err = d.startAll(ctx, values)
	}
	if err != nil {
		// What failed to start says why; what failed to stop after it
		// would bury that.
		_ = d.Stop()
		return nil, d.withheld.Error(err)
	}
	d.values = values
	return d, nil
}

// createServices creates every instance's Service and publishes their
// addresses as {service.NAME.addr|addrs|port}, as the local backend's
// chooseAddrs does with ports.
func (d *Deployment) createServices(ctx context.Context, values map[string]string) error {
	s, v := d.c.Study, d.c.Variant
	for _, svc := range s.Services {
		replicas := svc.Instances(v)
		if replicas == 0 {
			continue
		}
		var addrs []string
		for r := range replicas {
			name := svc.Name
			if r > 0 {
				name = fmt.Sprintf("%s-%d", svc.Name, r)
			}
			in := &instance{Instance: Instance{Name: name, Service: svc.Name, Container: containerName(svc.Name)}, object: objectName(d.c.Scope, name)}
			rctx, cancel := context.WithTimeout(ctx, apiWait)
			created, err := d.cs.CoreV1().Services(d.ns).Create(rctx, serviceManifest(in.object, svc.Name), metav1.CreateOptions{})
			cancel()
			if err != nil {
				return fmt.Errorf("deploy %s: its Service: %w", name, err)
			}
			d.services = append(d.services, in.object)
			in.Addr = net.JoinHostPort(created.Spec.ClusterIP, strconv.Itoa(Port))
			addrs = append(addrs, in.Addr)
			d.instances = append(d.instances, in)
		}
		study.SetServiceAddrs(values, svc.Name, addrs)
	}
	if err := s.ExpandAttrs(v, values); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	return nil
}

// startAll starts the instances service by service in start order, each
// once the one before is ready.
func (d *Deployment) startAll(ctx context.Context, values map[string]string) error {
	var ordered []*instance
	for _, svc := range d.c.Study.StartOrder() {
		ordered = append(ordered, d.instancesOf(svc.Name)...)
	}
	for r, in := range ordered {
		svc := d.c.Study.Service(in.Service)
		own, err := d.dialerValues(svc.Name, values)
		if err != nil {
			return fmt.Errorf("deploy %s: %w", in.Name, err)
		}
		rs, err := replicaSet(instanceSpec{
			svc: svc, name: in.Name, object: in.object, replica: replicaOf(in, ordered[:r]),
			values: own, image: d.c.Images[svc.Name], cpus: d.c.CPUs[svc.Name], node: d.c.Nodes[svc.Name], root: values["root"],
			secrets: d.secrets, secretName: d.secret,
		})
		if err != nil {
			return fmt.Errorf("deploy %w", err)
		}
		d.locked(func() { in.Started = time.Now() })
		rctx, cancel := context.WithTimeout(ctx, apiWait)
		_, err = d.cs.AppsV1().ReplicaSets(d.ns).Create(rctx, rs, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return fmt.Errorf("deploy %s: %w", in.Name, err)
		}
		d.replicaSets = append(d.replicaSets, in)
		if err := d.awaitReady(ctx, in, svc.Ready.Timeout); err != nil {
			return fmt.Errorf("deploy %w", err)
		}
		d.c.Progress("  started %s on %s (pod %s)", in.Name, in.Addr, in.Pod)
	}
	return nil
}

// replicaOf is an instance's replica number: how many of its service
// come before it.
func replicaOf(in *instance, before []*instance) int {
	n := 0
	for _, b := range before {
		if b.Service == in.Service {
			n++
		}
	}
	return n
}

// dialerValues are the placeholders a service sees: Values with Dial's
// for it, the variant's attributes expanded again with those.
func (d *Deployment) dialerValues(service string, shared map[string]string) (map[string]string, error) {
	own := d.c.Dial[service]
	if len(own) == 0 {
		return shared, nil
	}
	out := maps.Clone(shared)
	maps.Copy(out, own)
	return out, d.c.Study.ExpandAttrs(d.c.Variant, out)
}

// Values are the placeholders the deployment provides: the lab's, the
// variant's, and service.NAME.addr|addrs|port (the Services' addresses).
func (d *Deployment) Values() map[string]string { return maps.Clone(d.values) }

// Addr is a service's first instance's Service address, "" for a service
// the variant does not run.
func (d *Deployment) Addr(service string) string {
	if ins := d.instancesOf(service); len(ins) > 0 {
		return ins[0].Addr
	}
	return ""
}

// Instances lists a service's instances in replica order.
func (d *Deployment) Instances(service string) []Instance {
	var out []Instance
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, in := range d.instancesOf(service) {
		out = append(out, in.Instance)
	}
	return out
}

func (d *Deployment) instancesOf(service string) []*instance {
	var out []*instance
	for _, in := range d.instances {
		if in.Service == service {
			out = append(out, in)
		}
	}
	return out
}

// Kill ends every instance of a service as a crash does, its pod deleted
// with no grace, and keeps it down (its ReplicaSet scaled to 0) until
// Restart. It returns once the API has no pod of it left, which takes it
// out of its Service.
func (d *Deployment) Kill(service string) error {
	ins := d.instancesOf(service)
	if len(ins) == 0 {
		return fmt.Errorf("kill %s: no such service deployed", service)
	}
	var errs []error
	for _, in := range ins {
		d.locked(func() { in.faulted = true })
		errs = append(errs, d.down(in, 0))
	}
	return errors.Join(errs...)
}

// Restart starts a service's instances again, each on its Service's
// address with the same placeholders, and returns once each is ready;
// one still running is killed first (a restart event stands for a crash
// and its recovery). Each instance's Started and Ready time the restart.
func (d *Deployment) Restart(ctx context.Context, service string) error {
	ins := d.instancesOf(service)
	if len(ins) == 0 {
		return fmt.Errorf("restart %s: no such service deployed", service)
	}
	timeout := d.c.Study.Service(service).Ready.Timeout
	var errs []error
	for _, in := range ins {
		d.locked(func() { in.faulted = true })
		if err := d.down(in, 0); err != nil {
			errs = append(errs, err)
			continue
		}
		d.locked(func() { in.Started = time.Now() })
		if err := d.scale(in, 1); err != nil {
			errs = append(errs, fmt.Errorf("restart %w", err))
			continue
		}
		if err := d.awaitReady(ctx, in, timeout); err != nil {
			errs = append(errs, fmt.Errorf("restart %w", err))
			continue
		}
		d.locked(func() { in.faulted = false })
		d.c.Progress("  restarted %s in %s (pod %s)", in.Name, in.Ready.Sub(in.Started).Round(time.Millisecond), in.Pod)
	}
	return d.withheld.Error(errors.Join(errs...))
}

// Terminate stops one instance (by its Instances name) as the lab stops a
// service, SIGTERM and SIGKILL after the grace, and returns once its pod
// is gone; it is not restarted, and the rest runs on.
func (d *Deployment) Terminate(instance string) error {
	for _, in := range d.instances {
		if in.Name == instance {
			d.locked(func() { in.faulted = true })
			return d.down(in, -1)
		}
	}
	return fmt.Errorf("terminate %s: no such instance", instance)
}

// down scales an instance's ReplicaSet to 0, deletes its pods with grace
// seconds (-1: the pod's own grace), keeping their output, and waits
// until the API has none left.
func (d *Deployment) down(in *instance, grace int64) error {
	if err := d.scale(in, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), goneWait+stopGrace)
	defer cancel()
	pods, err := d.pods(ctx, in)
	if err != nil {
		return fmt.Errorf("stop %s: %w", in.Name, err)
	}
	opts := metav1.DeleteOptions{}
	if grace >= 0 {
		opts.GracePeriodSeconds = &grace
	}
	var saved []func()
	for i, p := range pods {
		saved = append(saved, d.saveLog(in, &pods[i]))
		if err := d.cs.CoreV1().Pods(d.ns).Delete(ctx, p.Name, opts); err != nil && !isNotFound(err) {
			return fmt.Errorf("stop %s: delete pod %s: %w", in.Name, p.Name, err)
		}
	}
	d.locked(func() { in.Pod = "" })
	err = poll(ctx, func(ctx context.Context) (bool, error) {
		left, err := d.pods(ctx, in)
		return len(left) == 0, err
	})
	for _, wait := range saved {
		wait()
	}
	if err != nil {
		return fmt.Errorf("stop %s: its pod is not gone: %w", in.Name, err)
	}
	return nil
}

// scale sets an instance's ReplicaSet's replicas.
func (d *Deployment) scale(in *instance, replicas int) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiWait)
	defer cancel()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := d.cs.AppsV1().ReplicaSets(d.ns).Patch(ctx, in.object, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("%s: scale to %d: %w", in.Name, replicas, err)
	}
	return nil
}

// pods are an instance's pods that the API still has.
func (d *Deployment) pods(ctx context.Context, in *instance) ([]corev1.Pod, error) {
	list, err := d.cs.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + in.object})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Crashed reports an instance that ended on its own: its container
// exited or was restarted, or its pod is gone or was replaced, though
// no fault of the step's did it. An API that does not answer reports
// none.
func (d *Deployment) Crashed() (Instance, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), apiWait)
	defer cancel()
	for _, in := range d.instances {
		var now Instance
		var faulted bool
		d.locked(func() { now, faulted = in.Instance, in.faulted })
		if faulted || now.Pod == "" {
			continue
		}
		pods, err := d.pods(ctx, in)
		if err != nil {
			return Instance{}, false
		}
		if len(pods) != 1 || pods[0].Name != now.Pod || pods[0].DeletionTimestamp != nil || failure(&pods[0]) != "" {
			// A fault may have begun since the snapshot.
			d.locked(func() { faulted = in.faulted })
			if !faulted {
				return now, true
			}
		}
	}
	return Instance{}, false
}

// locked runs f holding mu.
func (d *Deployment) locked(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// Stop deletes everything the deployment created, its instances in the
// reverse of their start order (each with its grace, its output kept),
// then their Services and its Secret. It works once the run's context is
// cancelled (Ctrl-C); a second Stop retries only what the first could not
// delete.
func (d *Deployment) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	var errs []error
	for i := len(d.replicaSets) - 1; i >= 0; i-- {
		in := d.replicaSets[i]
		if err := d.down(in, -1); err != nil && !isNotFound(err) {
			errs = append(errs, err)
			continue
		}
		if err := d.cs.AppsV1().ReplicaSets(d.ns).Delete(ctx, in.object, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop %s: delete its ReplicaSet: %w", in.Name, err))
			continue
		}
		d.replicaSets = d.replicaSets[:i]
	}
	var left []string
	for _, name := range d.services {
		if err := d.cs.CoreV1().Services(d.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop: delete Service %s: %w", name, err))
			left = append(left, name)
		}
	}
	d.services = left
	if d.secret != "" {
		if err := d.cs.CoreV1().Secrets(d.ns).Delete(ctx, d.secret, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop: delete the Secret %s: %w", d.secret, err))
		} else {
			d.secret = ""
		}
	}
	return d.withheld.Error(errors.Join(errs...))
}
