package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// machine is what a cluster could leave behind, as seen from outside.
// Other tests on this machine make network namespaces, interfaces, mounts
// and cgroups of their own as they run, so only those a cluster could
// leave are taken.
type machine struct {
	Netns      []string
	NetnsMount bool
	Mounts     []string
	Interfaces []string
	Sysctls    map[string]string
	Paths      []string
	Cgroups    []string // every hierarchy's top cgroups
	IPTables   string   // the machine's kubelet and CNI rules, without counters
}

// machineNetSettings are the machine's own of the settings kube-proxy
// writes (nf_conntrack_max and hashsize are global, the rest exist in
// each namespace), and br_netfilter's switch the cluster sets in its own.
var machineNetSettings = []string{
	"/proc/sys/net/netfilter/nf_conntrack_max", "/sys/module/nf_conntrack/parameters/hashsize",
	"/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established",
	"/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait",
	"/proc/sys/net/ipv4/conf/all/route_localnet", bridgeCallsIPTables,
}

// testNetns is the tests' clusters' namespace.
const testNetns = "msbench-kube-test"

func observe(t *testing.T, stateDir string) machine {
	t.Helper()
	var m machine
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		// Pod namespaces are "cni-..." where containerd is not told
		// to keep them in its state directory.
		if e.Name() == testNetns || strings.HasPrefix(e.Name(), "cni-") {
			m.Netns = append(m.Netns, e.Name())
		}
	}
	m.NetnsMount = isMountPoint(netnsDir)
	mps, err := mountPoints("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, mp := range mps {
		if strings.HasPrefix(mp, stateDir) || strings.HasPrefix(mp, "/run/containerd") || strings.Contains(mp, "kubelet") ||
			mp == netnsPath(testNetns) || strings.HasPrefix(mp, netnsPath("cni-")) {
			m.Mounts = append(m.Mounts, mp)
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Name == "node0" || i.Name == "node1" || i.Name == "cni0" {
			m.Interfaces = append(m.Interfaces, i.Name)
		}
	}
	if m.Sysctls, err = readSysctls(); err != nil {
		t.Fatal(err)
	}
	for _, f := range machineNetSettings {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m.Sysctls[f] = strings.TrimSpace(string(b))
	}
	for _, p := range systemPaths {
		if _, err := os.Stat(p); err == nil {
			m.Paths = append(m.Paths, p)
		}
	}
	for _, h := range cgroupHierarchies() {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			// Other msbench runs on this shared machine come and go
			// under cgroups of their own.
			if e.IsDir() && !strings.HasPrefix(e.Name(), "msbench-") {
				m.Cgroups = append(m.Cgroups, filepath.Join(h, e.Name()))
			}
		}
	}
	rules, err := exec.Command("iptables-save").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	for _, line := range strings.Split(counters.ReplaceAllString(string(rules), ""), "\n") {
		if strings.Contains(line, "KUBE") || strings.Contains(line, "CNI") {
			m.IPTables += line + "\n"
		}
	}
	slices.Sort(m.Mounts)
	return m
}

// counters are iptables-save's packet counts and its comment lines (which
// carry the time).
var counters = regexp.MustCompile(`\[\d+:\d+\]|(?m)^#.*$`)

// clusterMachine skips the test where a cluster cannot run (not root, the
// Debian packages missing and not installable) and returns the checkout.
func clusterMachine(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the local cluster needs root (network namespaces, mounts, cgroups); skipped")
	}
	source, err := checkout.Root("")
	if err != nil {
		t.Fatal(err)
	}
	if missing := MissingPackages(); len(missing) > 0 {
		install := exec.Command(filepath.Join(source, "scripts", "install-deps"), missing...)
		if out, err := install.CombinedOutput(); err != nil {
			t.Skipf("the local cluster needs Debian packages %v, which could not be installed: %v: %s", missing, err, out)
		}
	}
	return source
}

// TestClusterRunsAPodAndLeavesNothing brings a cluster up, runs a pod from
// a locally built FROM-scratch image, reaches it on its pod IP and through
// a Service's ClusterIP (also after the pod is replaced), and takes the
// cluster down again, after which the machine must be as it was.
func TestClusterRunsAPodAndLeavesNothing(t *testing.T) {
	source := clusterMachine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	stateDir := testStateDir(t)
	before := observe(t, stateDir)

	began := time.Now()
	c, err := Up(ctx, Options{StateDir: stateDir, Netns: testNetns, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up, node Ready, in %s", time.Since(began).Round(time.Millisecond))

	archive := filepath.Join(stateDir, "web.tar")
	const image = "msbench.local/cluster-test-web:1"
	if err := StaticImage(ctx, source, stateDir, "./internal/cluster/testdata/web", "web", image, archive, testLog{t}); err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}

	kc := client(t, c.Kubeconfig())
	const ns = "msbench-cluster-test"
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods are refused until the namespace's default service account
	// exists, which the controller manager makes a moment later.
	poll(t, ctx, "the namespace's default service account", func() error {
		_, err := kc.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	podStart := time.Now()
	if _, err := kc.CoreV1().Pods(ns).Create(ctx, testPod("web", image), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podIP := readyPodIP(t, ctx, kc, ns, "web")
	t.Logf("pod Ready %s after create, at %s", time.Since(podStart).Round(time.Millisecond), podIP)

	// Each request on a connection of its own, so that one to a pod
	// since deleted is not reused.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: c.DialContext, DisableKeepAlives: true}}
	if body, err := httpGetBody(ctx, client, "http://"+net.JoinHostPort(podIP, "8080")+"/from-the-test"); err != nil {
		t.Fatal(err)
	} else if want := "msbench pod web says hello to /from-the-test\n"; string(body) != want {
		t.Errorf("pod answered %q, want %q", body, want)
	}
	// The API server reaches the kubelet (logs, exec, port-forward, the
	// Summary API the backend's accounting reads) by the node's address.
	summary, err := kc.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", nodeName, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		t.Fatalf("the kubelet's Summary API through the API server: %v", err)
	}
	if !strings.Contains(string(summary), `"name": "web"`) {
		t.Errorf("the kubelet's summary does not list pod web: %.300s", summary)
	}
	if st, err := readState(c.l); err == nil {
		t.Logf("RSS of the cluster's processes with one pod: %d MiB", rssMiB(clusterPIDs(st)))
	}

	serviceRoutes(t, ctx, kc, ns, image, client)

	if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the namespace's pods gone", func() error {
		pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})

	downBegan := time.Now()
	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster down in %s", time.Since(downBegan).Round(time.Millisecond))
	leftNothing(t, before, stateDir)
}

// serviceRoutes puts a ClusterIP Service in front of pod web and checks
// that the ClusterIP reaches it from another pod and from the cluster's
// namespace, and, once web is replaced by a pod of the same labels, the
// new pod.
func serviceRoutes(t *testing.T, ctx context.Context, kc *kubernetes.Clientset, ns, image string, client *http.Client) {
	t.Helper()
	began := time.Now()
	svc, err := kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: testLabels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/via-the-service"
	answeredBy := func(pod string) func() error {
		return func() error {
			body, err := httpGetBody(ctx, client, url)
			if err != nil {
				return err
			}
			if want := "msbench pod " + pod + " says hello to /via-the-service\n"; string(body) != want {
				return fmt.Errorf("answered %q, want %q", body, want)
			}
			return nil
		}
	}
	poll(t, ctx, "web through ClusterIP "+svc.Spec.ClusterIP, answeredBy("web"))
	t.Logf("ClusterIP %s routes %s after the Service's create", svc.Spec.ClusterIP, time.Since(began).Round(time.Millisecond))

	// From another pod on the bridge: its answer comes back bridged.
	clientPod := testPod("client", image, "-get", url)
	clientPod.Labels, clientPod.Spec.RestartPolicy = nil, corev1.RestartPolicyNever
	clientPod.Spec.Containers[0].ReadinessProbe = nil
	if _, err := kc.CoreV1().Pods(ns).Create(ctx, clientPod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "pod client done", func() error {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, "client", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodFailed {
			logs, _ := kc.CoreV1().Pods(ns).GetLogs("client", &corev1.PodLogOptions{}).DoRaw(ctx)
			t.Fatalf("pod client failed: %s", logs)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	logs, err := kc.CoreV1().Pods(ns).GetLogs("client", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := "msbench pod web says hello to /via-the-service\n"; string(logs) != want {
		t.Errorf("pod client got %q through the ClusterIP, want %q", logs, want)
	}

	// A pod replaced, as a controller does after a fault: same labels, a
	// new name and pod IP, the same ClusterIP.
	replaced := time.Now()
	if err := kc.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Pods(ns).Create(ctx, testPod("web-2", image), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "web-2 through ClusterIP "+svc.Spec.ClusterIP, answeredBy("web-2"))
	t.Logf("the ClusterIP reaches the new pod %s after the old one's delete; the Service's checks took %s",
		time.Since(replaced).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// testLabels select the test's server pods.
var testLabels = map[string]string{"app": "web"}

// testPod runs the test's web image: a server on 8080, Ready when it
// answers, unless args make it something else.
func testPod(name, image string, args ...string) *corev1.Pod {
	if len(args) == 0 {
		args = []string{"-addr", ":8080"}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: testLabels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "web", Image: image, ImagePullPolicy: corev1.PullNever,
				Args:  args,
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

// readyPodIP waits for the pod to be Ready and returns its IP.
func readyPodIP(t *testing.T, ctx context.Context, kc *kubernetes.Clientset, ns, name string) string {
	t.Helper()
	var podIP string
	poll(t, ctx, "pod "+name+" Ready", func() error {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				podIP = p.Status.PodIP
				return nil
			}
		}
		return fmt.Errorf("phase %s, conditions %+v, containers %+v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
	})
	return podIP
}

// machineWait bounds how long a test waits for another cluster on this
// machine (another package's test, someone's msbench cluster up) to go.
const machineWait = 10 * time.Minute

// testStateDir is a state directory for one test's cluster, which has
// the machine to itself from here on (the test observes the machine
// after, so another cluster going does not count as its doing), and is
// taken down at the end of the test if the test did not.
func testStateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "msbench-cluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Down(context.Background(), dir); err != nil && !errors.Is(err, ErrNoCluster) {
			t.Errorf("down: %v", err)
		}
		os.Remove(dir) // if a skip left it, empty
	})
	err = claimMachine(context.Background(), dir, machineWait)
	if errors.Is(err, ErrBusy) {
		t.Skipf("skipped: %v, for more than %s", err, machineWait)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func client(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// poll retries f until it succeeds, with bounds for a busy 2-core machine.
func poll(t *testing.T, ctx context.Context, what string, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func rssMiB(pids []int) int64 {
	var kib int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				kib += n
			}
		}
	}
	return kib / 1024
}

// testLog sends progress lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// leftNothing checks that the machine is as before was taken, and that
// the cluster's state directory is gone.
func leftNothing(t *testing.T, before machine, stateDir string) {
	t.Helper()
	after := observe(t, stateDir)
	for _, d := range []struct {
		what          string
		before, after any
	}{
		{"network namespaces", before.Netns, after.Netns},
		{"mounts", before.Mounts, after.Mounts},
		{"interfaces", before.Interfaces, after.Interfaces},
		{"sysctls", before.Sysctls, after.Sysctls},
		{"system paths", before.Paths, after.Paths},
		{"cgroups", before.Cgroups, after.Cgroups},
		{"iptables rules", before.IPTables, after.IPTables},
	} {
		if fmt.Sprint(d.before) != fmt.Sprint(d.after) {
			t.Errorf("%s: before %v, after %v", d.what, d.before, d.after)
		}
	}
	for _, p := range clusterProcesses(t, stateDir) {
		t.Errorf("process left: %s", p)
	}
	// Another test's "ip netns add" may mount /run/netns meanwhile, but
	// none would unmount it, and an empty one mounted since is the
	// cluster's.
	if empty, _ := os.ReadDir(netnsDir); before.NetnsMount && !after.NetnsMount || !before.NetnsMount && after.NetnsMount && len(empty) == 0 {
		t.Errorf("%s a mount point before: %v, after: %v", netnsDir, before.NetnsMount, after.NetnsMount)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("state directory %s left (%v)", stateDir, err)
	}
	if holder, err := os.ReadFile(machineFile); err == nil && strings.Contains(string(holder), stateDir) {
		t.Errorf("%s still claims the machine for the cluster", machineFile)
	}
}

// clusterProcesses lists the live processes that belong to the cluster in
// stateDir: those whose command line names it (the daemons, containerd's
// shims) and those in kubepods cgroups (the containers). Other tests on
// this machine run containerd and socat of their own, so names alone
// would not do. A killed process whose parent died is a zombie until init
// collects it, which this machine's init does lazily; it holds nothing
// but its pid.
func clusterProcesses(t *testing.T, stateDir string) []string {
	t.Helper()
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range stats {
		if st.Dead() {
			continue
		}
		pid := strconv.Itoa(st.PID)
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		cgroups, _ := os.ReadFile("/proc/" + pid + "/cgroup")
		if strings.Contains(string(cmdline), stateDir) || strings.Contains(string(cgroups), "/kubepods") {
			out = append(out, st.Comm+"/"+pid+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}
