package linkpod

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"

	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/studyimage"
)

// The link pod's ports, on its own IP, and its Service's: the link's
// clients dial ProxyPort; ControlPort is the agent's control endpoint,
// which SetFault reaches through the API server's service proxy.
const (
	ProxyPort   = 7000
	ControlPort = 7001
)

// Container is the name of the link's container in its pod, for
// kube.Sampler's Usage(l.PodName(), Container).
const Container = "link"

// LabelLink labels a link's pod and Service with the Service's name, its
// selector.
const LabelLink = "msbench.dev/link"

// Bounds for a busy 2-core node: readyWait covers the pod's scheduling
// and start (the agent itself binds at once); goneWait the pod's grace
// period, which the agent ends within milliseconds of SIGTERM.
const (
	readyWait = 3 * time.Minute
	goneWait  = 2 * time.Minute
)

// Link is an emulated link of a run in a pod of the run's namespace,
// behind a ClusterIP Service: the link's clients are told Addr instead of
// the upstream's address.
type Link struct {
	Name     string // the study's name of the link, e.g. gateway>rpc
	Spec     links.Spec
	Upstream string // what the link forwards to, a ClusterIP or pod IP and port

	ns   *kube.Namespace
	base string // the Service's and the pod's name
	addr string
	pod  string // the running pod, "" once stopped
}

// Deploy runs the link name with spec in front of upstream (an IP:PORT
// in the cluster: a Service's ClusterIP or a pod's IP), from image (the
// generator image, studyimage.Generator's Ref, which holds msbench), in
// the namespace: a ClusterIP Service with ProxyPort and ControlPort, and a
// pod running `msbench link` on the pod's IP. It returns once the pod is
// Ready and its control endpoint answers through the Service; on error it
// deletes the pod it created. The Service goes with the namespace:
// msbench's rights (kube.RequiredRules) delete pods only, so each Deploy
// names its Service afresh.
//
// kube-proxy writes a new Service's rules on its own schedule, so a
// client may be refused for a moment after Deploy returns; services that
// retry their first connection ride it out.
func Deploy(ctx context.Context, ns *kube.Namespace, name string, spec links.Spec, upstream string, image string) (*Link, error) {
	if err := checkTo(upstream); err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	base, err := objectName(name)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	l := &Link{Name: name, Spec: spec, Upstream: upstream, ns: ns, base: base}
	svc, err := ns.Client().CoreV1().Services(ns.Name).Create(ctx, l.service(), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: create its service: %w", l, err)
	}
	l.addr = net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(ProxyPort))
	if _, err := ns.Client().CoreV1().Pods(ns.Name).Create(ctx, l.podSpec(image), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("%s: create its pod: %w", l, err)
	}
	l.pod = base
	if err := l.awaitReady(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", l, err), l.Stop(ctx))
	}
	return l, nil
}

func (l *Link) String() string {
	return fmt.Sprintf("link %s (%s) in namespace %s", l.Name, l.Spec, l.ns.Name)
}

// Addr is the Service's ClusterIP and ProxyPort: what the link's clients
// dial instead of the upstream.
func (l *Link) Addr() string { return l.addr }

// PodName is the link's pod, for kube.Sampler; "" once stopped.
func (l *Link) PodName() string { return l.pod }

// SetFault replaces the link's fault by f (links.None clears it), as
// links.Proxy.SetFault does locally; delay is for links.SlowClose only (0
// for links.DefaultSlowClose). It goes through the API server's service
// proxy to the pod's control endpoint.
func (l *Link) SetFault(ctx context.Context, f links.Fault, delay time.Duration) error {
	req := FaultRequest{Fault: f}
	if delay != 0 {
		req.Delay = delay.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: fault %s: %w", l, f, err)
	}
	s, err := l.call(ctx, l.proxy("POST").Suffix("fault").SetHeader("Content-Type", "application/json").Body(body))
	if err == nil && s.Fault != f {
		err = fmt.Errorf("the link says its fault is %q", s.Fault)
	}
	if err != nil {
		return fmt.Errorf("%s: fault %s: %w", l, f, err)
	}
	return nil
}

// Stats are the link's connection counts and fault, from its pod.
func (l *Link) Stats(ctx context.Context) (Stats, error) {
	s, err := l.call(ctx, l.proxy("GET").Suffix("stats"))
	if err != nil {
		return Stats{}, fmt.Errorf("%s: stats: %w", l, err)
	}
	return s, nil
}

// Stop deletes the link's pod, whose agent closes every connection it
// carries, and returns once the pod is gone. Like kube's Namespace.Delete
// it runs on when ctx is cancelled (a run stopped by Ctrl-C stops its
// links), within its own bound. It is idempotent.
func (l *Link) Stop(ctx context.Context) error {
	if l.pod == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), goneWait)
	defer cancel()
	pods := l.ns.Client().CoreV1().Pods(l.ns.Name)
	if err := pods.Delete(ctx, l.pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("stop %s: delete pod %s: %w", l, l.pod, err)
	}
	for {
		_, err := pods.Get(ctx, l.pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l.pod = ""
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stop %s: pod %s still there after %v: %w", l, l.pod, goneWait, errors.Join(ctx.Err(), err))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// proxy is a request to the API server's proxy of the Service's control
// port.
func (l *Link) proxy(verb string) *rest.Request {
	return l.ns.Client().CoreV1().RESTClient().Verb(verb).Namespace(l.ns.Name).Resource("services").
		Name(l.base + ":control").SubResource("proxy")
}

// call sends req and decodes the control endpoint's answer.
func (l *Link) call(ctx context.Context, req *rest.Request) (Stats, error) {
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		var r Refusal
		if json.Unmarshal(raw, &r) == nil && r.Error != "" {
			return Stats{}, fmt.Errorf("the link refused: %s", r.Error)
		}
		return Stats{}, err
	}
	var s Stats
	if err := json.Unmarshal(raw, &s); err != nil {
		return Stats{}, fmt.Errorf("control endpoint answered %q: %w", raw, err)
	}
	return s, nil
}

func (l *Link) labels() map[string]string { return kube.Labels(LabelLink, l.base) }

func (l *Link) service() *corev1.Service {
	return kube.Service(l.base, l.labels(), LabelLink,
		corev1.ServicePort{Name: "link", Port: ProxyPort, TargetPort: intstr.FromInt32(ProxyPort)},
		corev1.ServicePort{Name: "control", Port: ControlPort, TargetPort: intstr.FromInt32(ControlPort)})
}

// PodIPEnv is the pod's IP in the link's container, from the downward
// API, for its addresses.
const PodIPEnv = "MSBENCH_POD_IP"

// Args are the arguments of msbench (studyimage.GeneratorBinary) in a
// link pod: the link name with spec in front of upstream, listening on
// the pod's IP, which the kubelet puts in from the environment variable
// PodIPEnv.
func Args(name string, spec links.Spec, upstream string) []string {
	pod := "$(" + PodIPEnv + ")"
	args := []string{"link", "--name", name, "--listen", pod + ":" + strconv.Itoa(ProxyPort), "--to", upstream,
		"--control", pod + ":" + strconv.Itoa(ControlPort)}
	if spec.Latency > 0 {
		args = append(args, "--latency", spec.Latency.String())
	}
	if spec.Jitter > 0 {
		args = append(args, "--jitter", spec.Jitter.String())
	}
	if spec.Bandwidth > 0 {
		args = append(args, "--bandwidth", links.FormatBandwidth(spec.Bandwidth))
	}
	return args
}

// podSpec is the link's pod. The kubelet never restarts it: a link that
// crashed has dropped its connections, which the run must see, not hide.
func (l *Link) podSpec(image string) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: l.base, Labels: l.labels()},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: &no,
			EnableServiceLinks:           &no,
			Containers: []corev1.Container{{
				Name:            Container,
				Image:           image,
				ImagePullPolicy: studyimage.PullPolicy(image),
				Command:         []string{studyimage.GeneratorBinary},
				Args:            Args(l.Name, l.Spec, l.Upstream),
				Env: []corev1.EnvVar{{Name: PodIPEnv, ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Ports: []corev1.ContainerPort{{Name: "link", ContainerPort: ProxyPort}, {Name: "control", ContainerPort: ControlPort}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/stats", Port: intstr.FromInt32(ControlPort)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

// stuck are the reasons a container waits for what will not come by
// itself.
var stuck = map[string]bool{"ErrImageNeverPull": true, "ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}

// awaitReady waits until the pod is Ready and its control endpoint
// answers through the Service (which the service proxy needs its
// endpoints for), and fails as soon as the pod cannot get there.
func (l *Link) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	var last error
	for {
		pod, err := l.ns.Client().CoreV1().Pods(l.ns.Name).Get(ctx, l.pod, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("pod %s: %w", l.pod, err)
		}
		if err := podStuck(pod); err != nil {
			return fmt.Errorf("%w%s", err, l.logTail(ctx))
		}
		if podReady(pod) {
			if _, last = l.Stats(ctx); last == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s not ready (%s) within %v: %w", l.pod, pod.Status.Phase, readyWait, errors.Join(ctx.Err(), last))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logTail is the end of the pod's log, which says why the agent exited,
// for an error.
func (l *Link) logTail(ctx context.Context) string {
	lines := int64(10)
	out, err := l.ns.Client().CoreV1().Pods(l.ns.Name).GetLogs(l.pod, &corev1.PodLogOptions{Container: Container, TailLines: &lines}).DoRaw(ctx)
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return ""
	}
	return "; its log ends:\n" + string(bytes.TrimSpace(out))
}

// podStuck says why the pod will never be Ready, or nil.
func podStuck(pod *corev1.Pod) error {
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil {
			return fmt.Errorf("pod %s's container exited with status %d (%s): %s", pod.Name, t.ExitCode, t.Reason, t.Message)
		}
		if w := s.State.Waiting; w != nil && stuck[w.Reason] {
			return fmt.Errorf("pod %s cannot start: %s: %s", pod.Name, w.Reason, w.Message)
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return fmt.Errorf("pod %s failed: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// notName are the runs of characters a Kubernetes name cannot hold.
var notName = regexp.MustCompile(`[^a-z0-9]+`)

// objectName is a fresh DNS-1035 label for the link's Service and pod:
// "link-", the link's name in the characters a label takes, and a random
// tail, since an earlier Deploy's Service stays in the namespace.
func objectName(name string) (string, error) {
	tail := make([]byte, 3)
	if _, err := rand.Read(tail); err != nil {
		return "", err
	}
	const most = 63 - len("link--") - 6
	mid := strings.Trim(notName.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(mid) > most {
		mid = strings.TrimRight(mid[:most], "-")
	}
	if mid == "" {
		return "", fmt.Errorf("no letter or digit in the name %q", name)
	}
	return "link-" + mid + "-" + hex.EncodeToString(tail), nil
}
