package kubedeploy

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/kubehosts"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/study"

	"github.com/msbench/msbench/internal/studyimage"
)

// Labels of what a deployment creates: its instance's Service selects its
// pod by LabelInstance.
const (
	LabelInstance = "msbench.dev/instance"
	LabelService  = "msbench.dev/service"
)

const (
	// Port is every instance's port, on its pod and on its Service: each
	// pod has an address of its own, so one number serves all.
	Port = 8080
	// PodIPEnv is the variable a pod finds its own address in (the
	// downward API's status.podIP); {addr} and {host} name it.
	PodIPEnv = "MSBENCH_POD_IP"
	// TmpDir is where a pod's {tmp}, an emptyDir, is mounted.
	TmpDir = "/msbench-tmp"
	// stopGrace is a service's time to shut down on SIGTERM, as the
	// local backend gives it.
	stopGrace = 5 * time.Second
)

// podIP stands for the pod's address while placeholders are expanded; it
// becomes $(PodIPEnv), which the kubelet fills in, once the text's own '$'
// are escaped from the kubelet.
const podIP = "msbench-pod-ip.invalid"

// instanceSpec is what one instance's manifests are made of.
type instanceSpec struct {
	svc     *study.Service
	name    string // service, or service-N
	object  string // its Service's and ReplicaSet's name
	replica int
	values  map[string]string // the placeholders its service sees (a link's address in place of a service's)
	image   string
	cpus    float64 // placement's cores, 0 for none
	node    string  // the node its host is on, "" for any
	root    string  // the repository root the study's paths are under
	// secrets are the values its manifests must not hold, longest first:
	// the Secret secretName's key secretEnv(N) holds secrets[N].
	secrets    []string
	secretName string
}

// serviceManifest is an instance's ClusterIP Service: its address before
// its pod exists and after the pod is replaced.
func serviceManifest(object, service string) *corev1.Service {
	return kube.Service(object, labels(object, service), LabelInstance,
		corev1.ServicePort{Name: "main", Protocol: corev1.ProtocolTCP, Port: Port, TargetPort: intstr.FromInt32(Port)})
}

func labels(object, service string) map[string]string {
	l := kube.Labels(LabelInstance, object)
	l[LabelService] = containerName(service)
	return l
}

// replicaSet is an instance's ReplicaSet of one pod: the cluster restarts a
// container that ends, and Kill scales it to 0 to keep it down.
func replicaSet(in instanceSpec) (*appsv1.ReplicaSet, error) {
	pod, err := podSpec(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	one := int32(1)
	l := labels(in.object, in.svc.Name)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: in.object, Labels: l},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: in.object}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: pod},
		},
	}, nil
}

func podSpec(in instanceSpec) (corev1.PodSpec, error) {
	svc := in.svc
	if svc.User != "" {
		return corev1.PodSpec{}, userError(svc)
	}
	if in.image == "" {
		return corev1.PodSpec{}, fmt.Errorf("no image for service %s", svc.Name)
	}
	values := map[string]string{}
	for k, v := range in.values {
		values[k] = v
	}
	addr := net.JoinHostPort(podIP, strconv.Itoa(Port))
	for k, v := range map[string]string{"addr": addr, "host": podIP, "port": strconv.Itoa(Port), "replica": strconv.Itoa(in.replica), "tmp": TmpDir} {
		values[k] = v
	}
	command, err := placeholder.Expand(svc.Command, values)
	if err != nil {
		return corev1.PodSpec{}, fmt.Errorf("command %w", err)
	}
	used := make([]bool, len(in.secrets))
	text := func(s string) string { return kubeletText(s, in.secrets, used) }
	command = text(command)
	var own []corev1.EnvVar
	for _, kv := range svc.Env {
		v, err := placeholder.Expand(kv[1], values)
		if err != nil {
			return corev1.PodSpec{}, fmt.Errorf("env %s: %w", kv[0], err)
		}
		own = append(own, corev1.EnvVar{Name: kv[0], Value: text(v)})
	}
	// The pod's address and the secrets first: the kubelet expands
	// $(VAR) only from the variables listed before.
	env := []corev1.EnvVar{{Name: PodIPEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	for n, ok := range used {
		if ok {
			env = append(env, corev1.EnvVar{Name: secretEnv(n), ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: in.secretName}, Key: secretEnv(n)}}})
		}
	}
	env = append(env, corev1.EnvVar{Name: "TMPDIR", Value: TmpDir})
	env = append(env, own...)
	probe, err := startupProbe(svc.Ready, values)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	// A probe has no $(VAR): its path would show the secret to whoever
	// reads the pod.
	if probe != nil && probe.HTTPGet != nil && slices.ContainsFunc(in.secrets, func(s string) bool { return strings.Contains(probe.HTTPGet.Path, s) }) {
		return corev1.PodSpec{}, errors.New("ready: the check's URL holds a secret (a dependency's password or a token's key), which the pod's spec would show: check a path without it")
	}
	dir := in.root
	if svc.Dir != "" {
		dir = filepath.Join(in.root, svc.Dir)
	}
	resources, err := resourcesOf(svc.Limits, in.cpus)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	grace := int64(stopGrace / time.Second)
	no := false
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:            containerName(svc.Name),
			Image:           in.image,
			ImagePullPolicy: studyimage.PullPolicy(in.image),
			// As the local backend starts it: exec makes the service the
			// container's first process, which SIGTERM reaches.
			Command:      []string{"/bin/sh", "-c", "exec " + command},
			WorkingDir:   dir,
			Env:          env,
			Resources:    resources,
			StartupProbe: probe,
			VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: TmpDir}},
		}},
		Volumes:                       []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Affinity:                      kubehosts.Affinity(in.node),
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: &grace,
		// A service gets the study's environment, not a variable per
		// Service of the namespace, nor an API token.
		EnableServiceLinks:           &no,
		AutomountServiceAccountToken: &no,
	}, nil
}

// kubeletText makes text what the kubelet passes on unchanged, but for
// the pod's address and the secrets, which it fills in: the kubelet reads
// $(NAME) and $$ in commands and environment values. One pass, so that no
// reference is escaped and no secret is looked for inside a reference;
// secrets come longest first, so one that holds another is replaced
// whole. used[N] is set for each secrets[N] replaced.
func kubeletText(text string, secrets []string, used []bool) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		rest := text[i:]
		if n := slices.IndexFunc(secrets, func(s string) bool { return strings.HasPrefix(rest, s) }); n >= 0 {
			b.WriteString("$(" + secretEnv(n) + ")")
			used[n] = true
			i += len(secrets[n])
			continue
		}
		switch {
		case strings.HasPrefix(rest, podIP):
			b.WriteString("$(" + PodIPEnv + ")")
			i += len(podIP)
		case rest[0] == '$':
			b.WriteString("$$")
			i++
		default:
			b.WriteByte(rest[0])
			i++
		}
	}
	return b.String()
}

// startupProbe is the study's readiness check as the kubelet makes it. A
// startup probe, not a readiness probe: it stops once it passes, as the
// local backend's check does, so no probe adds requests to a step's and
// a service slow under load is never taken out of its Service.
func startupProbe(r study.Ready, values map[string]string) (*corev1.Probe, error) {
	var handler corev1.ProbeHandler
	switch {
	case r.HTTP != "":
		text, err := placeholder.Expand(r.HTTP, values)
		if err != nil {
			return nil, fmt.Errorf("ready: %w", err)
		}
		u, err := url.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("ready: %w", err)
		}
		port, err := ownPort(u.Host, map[string]string{"http": "80", "https": "443"}[u.Scheme], text)
		if err != nil {
			return nil, err
		}
		scheme := corev1.URISchemeHTTP
		if u.Scheme == "https" {
			scheme = corev1.URISchemeHTTPS
		}
		handler.HTTPGet = &corev1.HTTPGetAction{Path: u.RequestURI(), Port: intstr.FromInt32(port), Scheme: scheme}
	case r.TCP != "":
		text, err := placeholder.Expand(r.TCP, values)
		if err != nil {
			return nil, fmt.Errorf("ready: %w", err)
		}
		port, err := ownPort(text, "", text)
		if err != nil {
			return nil, err
		}
		handler.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}
	default:
		return nil, nil
	}
	// Probed every second until the study's timeout, after which the
	// kubelet restarts the container (Deploy has failed by then).
	return &corev1.Probe{
		ProbeHandler:     handler,
		PeriodSeconds:    1,
		TimeoutSeconds:   2,
		FailureThreshold: int32(math.Ceil(r.Timeout.Seconds())) + 1,
	}, nil
}

// ownPort is the port of hostport, which must be the pod's own address:
// the kubelet probes the pod, not another.
func ownPort(hostport, defaultPort, text string) (int32, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil && defaultPort != "" {
		host, port, err = hostport, defaultPort, nil
	}
	if err != nil || host != podIP {
		return 0, fmt.Errorf("ready: %q is not the instance's own address ({addr} or {host}), which is all a cluster can probe", strings.ReplaceAll(text, podIP, "{host}"))
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("ready: %q: port %q", text, port)
	}
	return int32(n), nil
}

// resourcesOf maps a study's limits to the container's limits, and
// placement's cores to requests equal to them (Guaranteed QoS when the
// study caps memory too). Without placement nothing is reserved, as
// locally a limit only caps.
func resourcesOf(l study.Limits, cores float64) (corev1.ResourceRequirements, error) {
	if cores < 0 || l.CPUs < 0 || l.MemoryBytes < 0 {
		return corev1.ResourceRequirements{}, fmt.Errorf("resources: negative cores %v or limits %+v", cores, l)
	}
	cpu := l.CPUs
	if cores > 0 && (cpu == 0 || cores < cpu) {
		cpu = cores
	}
	limits := corev1.ResourceList{}
	if cpu > 0 {
		limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Ceil(cpu*1000)), resource.DecimalSI)
	}
	if l.MemoryBytes > 0 {
		limits[corev1.ResourceMemory] = *resource.NewQuantity(l.MemoryBytes, resource.BinarySI)
	}
	if len(limits) == 0 {
		return corev1.ResourceRequirements{}, nil
	}
	// Requests default to limits when absent: zero says nothing is
	// reserved.
	requests := corev1.ResourceList{}
	for name := range limits {
		requests[name] = resource.MustParse("0")
	}
	if cores > 0 {
		requests = limits.DeepCopy()
	}
	return corev1.ResourceRequirements{Limits: limits, Requests: requests}, nil
}

func userError(svc *study.Service) error {
	return fmt.Errorf("service %s runs as the system user %q (user:), which a cluster's image does not have: leave user: out to run it on a cluster", svc.Name, svc.User)
}

// objectName makes an instance's name a Service's and ReplicaSet's name
// (a DNS-1035 label): lower case letters, digits and '-', a letter first.
func objectName(scope, instance string) string {
	b := []byte(strings.ToLower(scope + instance))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-")
	if s == "" {
		s = "s"
	} else if s[0] < 'a' {
		s = "s-" + s
	}
	// Room for the pods' generated suffix.
	if len(s) > 57 {
		s = strings.TrimRight(s[:57], "-")
	}
	return s
}

// containerName is the service's name as a container's (a DNS-1123 label).
func containerName(service string) string {
	return objectName("", service)
}
