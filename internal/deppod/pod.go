package deppod

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
)

// Container is the name of the dependency's container in its pod, for
// kube.Sampler's Usage(p.PodName(), Container).
const Container = "dependency"

// LabelDependency labels a dependency's pods with its Service's name, the
// Service's selector: a replacement pod (Start after Kill) is found by it.
const LabelDependency = "msbench.dev/dependency"

// ports are each kind's usual port: a pod has an address of its own, so
// the usual one is free, and a client's defaults fit it.
var ports = map[deps.Kind]int{
	deps.Postgres: 5432,
	deps.Redis:    6379,
	deps.RabbitMQ: 5672,
	deps.MariaDB:  3306,
	deps.Mongo:    27017,
}

// Bounds for a busy 2-core node: readyWait covers a pod's scheduling,
// its image's start and the server's initialisation (RabbitMQ takes
// seconds alone); goneWait a pod's grace period (the agent stops in about
// three seconds) and the kubelet's clean-up.
const (
	readyWait   = 5 * time.Minute
	restartWait = 2 * time.Minute
	goneWait    = 2 * time.Minute
)

// Pod is a dependency of a run in a pod of the run's namespace, behind a
// ClusterIP Service whose address its values carry, with the password of a
// Secret of its own. The Service and the Secret go with the namespace:
// msbench's rights (kube.RequiredRules) delete pods only. A Pod is used by
// one goroutine at a time.
type Pod struct {
	Name string // the study's name of the dependency
	Kind deps.Kind
	// StartupTime is the agent's, from its start until ready, of the
	// first pod (or of the replacement after Start).
	StartupTime time.Duration

	ns       *kube.Namespace
	base     string // the Secret's and the Service's name, and the pods' prefix
	image    string
	limits   study.Limits
	port     int
	password string
	values   map[string]string
	pod      string // the running pod
	pods     int    // pods created so far, which names the next
	restarts int    // restarted events the running pod has printed
}

// Deploy runs the dependency name of kind, from image (Build's Ref,
// imported into the cluster), in the namespace: a Secret holding a fresh
// password, a ClusterIP Service on kind's usual port, and a pod running
// the agent on the pod's IP with its data in an emptyDir. The limits cap
// the pod and reserve nothing, as a local run's limits do (and as package
// kubedeploy's for services without placement). It returns once the agent
// says the dependency is ready and its Service reaches it, and on error
// deletes the pod it created.
//
//	p, err := deppod.Deploy(ctx, ns, "db", deps.Postgres, built.Ref, dep.Limits)
//	defer p.Stop(ctx)
//	for k, v := range p.Values() { values["dep.db."+k] = v }
func Deploy(ctx context.Context, ns *kube.Namespace, name string, kind deps.Kind, image string, limits study.Limits) (*Pod, error) {
	port, ok := ports[kind]
	if !ok {
		_, err := deps.ParseKind(string(kind))
		return nil, fmt.Errorf("dependency %s: %w", name, err)
	}
	keys, err := deps.Keys(kind)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", name, err)
	}
	tail := make([]byte, 3)
	if _, err := rand.Read(tail); err != nil {
		return nil, fmt.Errorf("dependency %s: %w", name, err)
	}
	// A fresh name per Deploy: the Service and Secret of an earlier one
	// stay in the namespace until it goes.
	base := "dep-" + name + "-" + hex.EncodeToString(tail)
	// Pods are named base-N, which must be a DNS label too (N below 10,000).
	if errs := validation.IsDNS1035Label(base + "-9999"); len(errs) > 0 {
		return nil, fmt.Errorf("dependency %q: its name must make a Kubernetes name: %s", name, strings.Join(errs, "; "))
	}
	p := &Pod{Name: name, Kind: kind, ns: ns, base: base, image: image, limits: limits, port: port}
	if slices.Contains(keys, "password") {
		// Not kube.CreateSecret's value: its alphabet has '-' and '_',
		// which deps.CheckPassword refuses (the servers' set-up writes
		// the password unquoted).
		p.password = rand.Text()
		if err := p.createSecret(ctx); err != nil {
			return nil, err
		}
	}
	svc, err := ns.Client().CoreV1().Services(ns.Name).Create(ctx, p.service(), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: create its service: %w", p, err)
	}
	if err := p.start(ctx, net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(port))); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Pod) String() string {
	return fmt.Sprintf("dependency %s (%s) in namespace %s", p.Name, p.Kind, p.ns.Name)
}

// Values are the dependency's placeholders (deps.Keys: addr, host, port,
// url, and user, password, database... as the kind has them) for a client
// in the cluster: the Service's ClusterIP and port, and the real password,
// which the runner redacts in its own output. They hold across Restart,
// Kill and Start.
func (p *Pod) Values() map[string]string { return maps.Clone(p.values) }

// PodName is the running pod's name, for kube.Sampler; Start changes it.
func (p *Pod) PodName() string { return p.pod }

// Restart restarts the dependency in place, the outage fault: the agent
// (SIGUSR1, sent by exec) stops its server and starts it again on the same
// address and data, as a local run's dependency restarts. It returns once
// the agent says the server is ready again, with the agent's measure of
// the restart.
func (p *Pod) Restart(ctx context.Context) (time.Duration, error) {
	if err := p.exec(ctx, "/bin/sh", "-c", "kill -USR1 1"); err != nil {
		return 0, fmt.Errorf("restart %s: %w", p, err)
	}
	// Counted once sent: a restart whose line came too late for this
	// call must not pass for the next one's.
	p.restarts++
	ctx, cancel := context.WithTimeout(ctx, restartWait)
	defer cancel()
	e, err := p.await(ctx, "restarted", p.restarts)
	if err != nil {
		return 0, fmt.Errorf("restart %s: %w", p, err)
	}
	return time.Duration(e.Seconds * float64(time.Second)), nil
}

// Kill deletes the running pod without a grace period, as a node's loss
// does, and returns once it is gone. Unlike a local run's kill its data
// goes with it: Start brings up a new pod, empty, behind the same Service
// and password.
func (p *Pod) Kill(ctx context.Context) error {
	if _, err := p.deletePod(ctx, 0); err != nil {
		return fmt.Errorf("kill %s: %w", p, err)
	}
	return nil
}

// Start starts a new pod after Kill and returns once it is ready.
func (p *Pod) Start(ctx context.Context) error {
	if p.pod != "" {
		return fmt.Errorf("start %s: pod %s still runs", p, p.pod)
	}
	return p.start(ctx, p.values["addr"])
}

// Stop deletes the running pod, whose agent stops the server and removes
// its data, and returns once it is gone; an agent that did not stop
// cleanly (exit status 0) is an error with the end of its log. Like kube's
// Namespace.Delete it runs on when ctx is cancelled (a run stopped by
// Ctrl-C stops its dependencies), within its own bound.
func (p *Pod) Stop(ctx context.Context) error {
	exit, err := p.deletePod(context.WithoutCancel(ctx), -1)
	if err != nil {
		return fmt.Errorf("stop %s: %w", p, err)
	}
	// A container that never started has a status made up by the
	// kubelet (ContainerStatusUnknown, 137): Deploy reports why.
	if exit != nil && exit.ExitCode != 0 && !exit.StartedAt.IsZero() {
		var tail []string
		if m := strings.TrimSpace(exit.Message); m != "" {
			tail = strings.Split(m, "\n")
		}
		return fmt.Errorf("stop %s: the agent exited with status %d (%s)%s", p, exit.ExitCode, exit.Reason, p.redactTail(tail))
	}
	return nil
}

func (p *Pod) createSecret(ctx context.Context) error {
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: p.base, Labels: p.labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte(p.password)},
	}
	if _, err := p.ns.Client().CoreV1().Secrets(p.ns.Name).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		// An API server may echo the object it refused.
		return fmt.Errorf("%s: create its secret: %w", p, p.redact(err))
	}
	return nil
}

// redact withholds the password from err's message, plain or as the
// Secret's base64.
func (p *Pod) redact(err error) error { return kube.NewWithholder(p.password).Error(err) }

func (p *Pod) labels() map[string]string { return kube.Labels(LabelDependency, p.base) }

func (p *Pod) service() *corev1.Service {
	return kube.Service(p.base, p.labels(), LabelDependency, corev1.ServicePort{Name: string(p.Kind), Port: int32(p.port)})
}

// spec is a pod of the dependency. It is never restarted by the kubelet:
// a new container in the same pod would find the old one's data, which
// the agent does not take over, and a crash is the run's to see.
func (p *Pod) spec(name string) *corev1.Pod {
	no := false
	env := []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	if p.password != "" {
		env = append(env, corev1.EnvVar{Name: PasswordEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: p.base}, Key: "password"}}})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: p.labels()},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: &no,
			EnableServiceLinks:           &no,
			Containers: []corev1.Container{{
				Name:            Container,
				Image:           p.image,
				ImagePullPolicy: studyimage.PullPolicy(p.image),
				Args:            Args(p.port),
				Env:             env,
				Ports:           []corev1.ContainerPort{{Name: string(p.Kind), ContainerPort: int32(p.port)}},
				Resources:       resources(p.limits),
				VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: VolumeDir}},
				// The end of the log as the termination message of a
				// failed agent, which Stop reports.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

// resources are the study's limits as a container's, with requests of
// zero: Kubernetes would take the limits as requests too, and reserve
// them.
func resources(l study.Limits) corev1.ResourceRequirements {
	limits := corev1.ResourceList{}
	if l.CPUs > 0 {
		limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Ceil(l.CPUs*1000)), resource.DecimalSI)
	}
	if l.MemoryBytes > 0 {
		limits[corev1.ResourceMemory] = *resource.NewQuantity(l.MemoryBytes, resource.BinarySI)
	}
	requests := corev1.ResourceList{}
	for name := range limits {
		requests[name] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return corev1.ResourceRequirements{Limits: limits, Requests: requests}
}

// start creates the next pod and waits for the agent's ready line; the
// values are that line's with addr, the Service's address, in place of
// the pod's. A pod that does not get there is deleted.
func (p *Pod) start(ctx context.Context, addr string) error {
	err := p.startPod(ctx, addr)
	if err != nil && p.pod != "" {
		// Nothing of it is worth a grace period.
		_, derr := p.deletePod(context.WithoutCancel(ctx), 0)
		err = errors.Join(err, derr)
	}
	return err
}

func (p *Pod) startPod(ctx context.Context, addr string) error {
	p.pods++
	name := p.base + "-" + strconv.Itoa(p.pods)
	if _, err := p.ns.Client().CoreV1().Pods(p.ns.Name).Create(ctx, p.spec(name), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: create its pod: %w", p, err)
	}
	p.pod, p.restarts = name, 0
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	ready, err := p.await(ctx, "ready", 1)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	values, err := serviceValues(ready, addr, p.password)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	// kube-proxy writes the Service's rules for the new pod on its own
	// schedule, and a study's services, started next, connect at once.
	if err := p.exec(ctx, "/bin/bash", "-c", routeCheck(values["host"], values["port"])); err != nil {
		return fmt.Errorf("%s: its service does not reach it: %w", p, err)
	}
	p.values = values
	p.StartupTime = time.Duration(ready.Seconds * float64(time.Second))
	return nil
}

// serviceValues are a ready Event's values for a client of the Service at
// addr (its ClusterIP:port) rather than of the pod, with the password.
func serviceValues(ready Event, addr, password string) (map[string]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("service address %q: %w", addr, err)
	}
	if ready.Addr == "" {
		return nil, errors.New("the agent's ready line gives no address")
	}
	values := replaceAll(ready.Values, ready.Addr, addr)
	values["addr"], values["host"], values["port"] = addr, host, port
	if _, ok := values["password"]; ok && password == "" {
		return nil, errors.New("the agent names a password, and the dependency has none")
	}
	return Event{Values: values}.Resolve(password), nil
}

// await follows the running pod's log from its start until the nth line
// of event, and returns that line. It fails as soon as the pod cannot get
// there: its container ended, or waits for what will not come.
func (p *Pod) await(ctx context.Context, event string, nth int) (Event, error) {
	if err := p.awaitContainer(ctx); err != nil {
		return Event{}, err
	}
	req := p.ns.Client().CoreV1().Pods(p.ns.Name).GetLogs(p.pod, &corev1.PodLogOptions{Container: Container, Follow: true})
	stream, err := req.Stream(ctx)
	if err != nil {
		return Event{}, fmt.Errorf("pod %s's log: %w", p.pod, err)
	}
	defer stream.Close()
	e, tail, err := scanEvents(stream, event, nth)
	if err == nil {
		return e, nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return Event{}, fmt.Errorf("pod %s printed no %q line (%w)%s%s", p.pod, event, err, p.state(context.WithoutCancel(ctx)), p.redactTail(tail))
}

// scanEvents reads r's lines until the nth Event of kind event. Lines that
// are no Event (a server's or the agent's message on standard error) are
// kept, the last few, for the error when r ends first.
func scanEvents(r io.Reader, event string, nth int) (Event, []string, error) {
	const keep = 10
	var tail []string
	seen := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event != "" {
			if e.Event == event {
				if seen++; seen == nth {
					return e, nil, nil
				}
			}
			continue
		}
		tail = append(tail, sc.Text())
		if len(tail) > keep {
			tail = tail[1:]
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return Event{}, tail, err
}

func (p *Pod) redactTail(tail []string) string {
	if len(tail) == 0 {
		return ""
	}
	return "; its log ends:\n" + p.redact(errors.New(strings.Join(tail, "\n"))).Error()
}

// waiting are the reasons a container waits for something that will not
// come by itself. Not CreateContainerConfigError: the kubelet reports it
// while its cache has not yet seen the pod's new Secret ("failed to sync
// secret cache"), and retries.
var waiting = []string{"ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "RunContainerError"}

// awaitContainer waits until the pod's container runs or has ended, whose
// log can then be read, and fails if it cannot start.
func (p *Pod) awaitContainer(ctx context.Context) error {
	for {
		pod, err := p.ns.Client().CoreV1().Pods(p.ns.Name).Get(ctx, p.pod, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("pod %s: %w", p.pod, err)
		}
		why := string(pod.Status.Phase)
		for _, s := range pod.Status.ContainerStatuses {
			switch {
			case s.State.Running != nil || s.State.Terminated != nil:
				return nil
			case s.State.Waiting != nil && slices.Contains(waiting, s.State.Waiting.Reason):
				return fmt.Errorf("pod %s cannot start: %s: %s", p.pod, s.State.Waiting.Reason, s.State.Waiting.Message)
			case s.State.Waiting != nil:
				why = s.State.Waiting.Reason + ": " + s.State.Waiting.Message
			}
		}
		if pod.Status.Phase == corev1.PodFailed {
			return fmt.Errorf("pod %s failed: %s %s", p.pod, pod.Status.Reason, pod.Status.Message)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s not started (%s): %w", p.pod, why, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// state describes how the pod's container ended, if it did.
func (p *Pod) state(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	pod, err := p.ns.Client().CoreV1().Pods(p.ns.Name).Get(ctx, p.pod, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if t := terminated(pod); t != nil {
		return fmt.Sprintf("; its container exited with status %d (%s)", t.ExitCode, t.Reason)
	}
	return ""
}

// exec runs a command in the running pod's container.
func (p *Pod) exec(ctx context.Context, command ...string) error {
	cfg, err := p.ns.Target.Config(0)
	if err != nil {
		return err
	}
	req := p.ns.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace(p.ns.Name).Name(p.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: Container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("exec in pod %s: %w", p.pod, err)
	}
	var out strings.Builder
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &out}); err != nil {
		return fmt.Errorf("exec in pod %s: %w: %s", p.pod, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// routeCheck is a bash script that waits, a minute at most, until a TCP
// connection to host:port opens: from the dependency's own pod, through
// its Service (a bridge in hairpin mode brings it back, as CNI plugins
// do), since msbench cannot reach a ClusterIP of a remote cluster.
func routeCheck(host, port string) string {
	return fmt.Sprintf(`for i in $(seq 600); do (exec 3<>"/dev/tcp/%[1]s/%[2]s") 2>/dev/null && exit 0; sleep 0.1; done; echo "no connection to %[1]s:%[2]s in a minute" >&2; exit 1`, host, port)
}

// deletePod deletes the running pod, with grace seconds (the pod's own
// when negative), and waits until it is gone. It returns how its
// container ended, as the last status the API server had shows it, or nil
// if it never ran or no status said.
func (p *Pod) deletePod(ctx context.Context, grace int64) (*corev1.ContainerStateTerminated, error) {
	if p.pod == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	pods := p.ns.Client().CoreV1().Pods(p.ns.Name)
	pod, err := pods.Get(ctx, p.pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p.pod = ""
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", p.pod, err)
	}
	// Watched from before the deletion, so that the status the kubelet
	// writes once the container has exited is seen before the pod goes.
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", p.pod).String(), ResourceVersion: pod.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watch pod %s: %w", p.pod, err)
	}
	defer w.Stop()
	opts := metav1.DeleteOptions{}
	if grace >= 0 {
		opts.GracePeriodSeconds = &grace
	}
	if err := pods.Delete(ctx, p.pod, opts); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete pod %s: %w", p.pod, err)
	}
	exit := terminated(pod)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The API server ended the watch early; the status is
				// then unknown, the pod's going still awaited.
				return exit, p.awaitGone(ctx)
			}
			if pod, ok := ev.Object.(*corev1.Pod); ok && terminated(pod) != nil {
				exit = terminated(pod)
			}
			if ev.Type == watch.Deleted {
				p.pod = ""
				return exit, nil
			}
		case <-ctx.Done():
			return exit, fmt.Errorf("pod %s still there after %v: %w", p.pod, goneWait, ctx.Err())
		}
	}
}

// terminated is how the pod's container ended, or nil.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == Container {
			return s.State.Terminated
		}
	}
	return nil
}

// awaitGone polls until the running pod is gone.
func (p *Pod) awaitGone(ctx context.Context) error {
	for {
		_, err := p.ns.Client().CoreV1().Pods(p.ns.Name).Get(ctx, p.pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			p.pod = ""
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s still there after %v: %w", p.pod, goneWait, errors.Join(ctx.Err(), err))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
