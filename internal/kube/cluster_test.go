package kube

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/cluster/clustertest"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/cluster"
	holder "github.com/msbench/msbench/internal/lease"
)

// The integration tests run against a real cluster: the one whose state
// directory stateEnv names (left running), or one they bring up and take
// down. They skip without root, or when another cluster is up on this
// machine (one kubelet's cgroups fit).
const (
	stateEnv = "MSBENCH_KUBE_TEST_STATE"
	// childEnv makes the test binary an msbench that creates a namespace
	// with the kubeconfig it names, and deletes it on a signal, as a run
	// does on Ctrl-C, SIGTERM or SIGHUP.
	childEnv     = "MSBENCH_KUBE_TEST_CHILD"
	childLeases  = "MSBENCH_KUBE_TEST_LEASES"
	workImage    = "msbench.local/kube-test-work:1"
	testNetns    = "msbench-kube-k4"
	restrictedSA = "msbench-runner"
)

func TestMain(m *testing.M) {
	if kubeconfig := os.Getenv(childEnv); kubeconfig != "" {
		os.Exit(child(kubeconfig))
	}
	code := m.Run()
	if shared.admin != nil && !shared.started {
		if err := removeIdentity(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "the restricted identity:", err)
			code = 1
		}
	}
	if shared.started {
		if err := shared.c.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "cluster down:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// child is the test binary as an msbench run, with its signals.
func child(kubeconfig string) int {
	leaseDir = os.Getenv(childLeases)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	n, err := CreateNamespace(ctx, Target{Kubeconfig: kubeconfig}, "child", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(n.Name)
	<-ctx.Done()
	if err := n.Delete(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild starts an msbench run in a child process and returns it
// once its namespace is ready, with the namespace's name.
func startChild(t *testing.T, leases string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+shared.restricted.Kubeconfig, childLeases+"="+leases)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	name, err := bufio.NewReader(out).ReadString('\n')
	name = strings.TrimSpace(name)
	if err != nil || name == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child created no namespace: %q, %v", name, err)
	}
	t.Cleanup(func() { removeNamespace(t, name) })
	return cmd, name
}

// TestSignalledRunDeletesItsNamespace: a run stopped by Ctrl-C, SIGTERM
// or SIGHUP deletes its namespace, the signal having cancelled its
// context, and its lease.
func TestSignalledRunDeletesItsNamespace(t *testing.T) {
	testCluster(t)
	dir := useLeaseDir(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		cmd, name := startChild(t, dir)
		began := time.Now()
		cmd.Process.Signal(sig)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: the run ended with %v", sig, err)
		}
		t.Logf("%v: namespace deleted and the run ended in %s", sig, time.Since(began).Round(time.Millisecond))
		if _, err := shared.admin.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%v: namespace %s still there: %v", sig, name, err)
		}
	}
	if leases, _ := filepath.Glob(filepath.Join(dir, leasePrefix+"*")); len(leases) != 0 {
		t.Errorf("leases left: %v", leases)
	}
}

// shared is the cluster of this package's tests, its admin client, and
// a kubeconfig with RequiredRules alone.
var shared struct {
	once       sync.Once
	c          *cluster.Cluster
	started    bool
	admin      kubernetes.Interface
	restricted Target
	skip, err  string
}

func testCluster(t *testing.T) {
	t.Helper()
	shared.once.Do(func() { shared.skip, shared.err = setUp(t) })
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != "" {
		t.Fatal(shared.err)
	}
}

func setUp(t *testing.T) (skip, fail string) {
	if os.Geteuid() != 0 {
		return "the local cluster needs root; skipped", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	source, err := checkout.Root("")
	if err != nil {
		return "", err.Error()
	}
	if dir := os.Getenv(stateEnv); dir != "" {
		if shared.c, err = cluster.Open(dir); err != nil {
			return "", err.Error()
		}
	} else {
		if missing := cluster.MissingPackages(); len(missing) > 0 {
			return fmt.Sprintf("the local cluster needs Debian packages %v (make deps)", missing), ""
		}
		dir, err := os.MkdirTemp("", "msbench-kube-test-")
		if err != nil {
			return "", err.Error()
		}
		began := time.Now()
		// One cluster runs on a machine at a time: internal/cluster's
		// tests, run beside these by go test ./..., may hold it.
		if shared.c, err = cluster.Up(ctx, cluster.Options{StateDir: dir, Netns: testNetns, Log: testLog{t}, WaitForMachine: 15 * time.Minute}); err != nil {
			os.RemoveAll(dir)
			return "", "cluster up: " + err.Error()
		}
		shared.started = true
		t.Logf("cluster up in %s", time.Since(began).Round(time.Millisecond))
	}
	admin := Target{Kubeconfig: shared.c.Kubeconfig()}
	if shared.admin, err = admin.Client(0); err != nil {
		return "", err.Error()
	}
	archive := filepath.Join(shared.c.StateDir(), "kube-test-work.tar")
	if err := cluster.StaticImage(ctx, source, shared.c.StateDir(), "./internal/kube/testdata/work", "work", workImage, archive, testLog{t}); err != nil {
		return "", err.Error()
	}
	if err := shared.c.ImportImage(ctx, archive); err != nil {
		return "", err.Error()
	}
	if shared.restricted, err = restrictedTarget(ctx, admin); err != nil {
		return "", "an identity with RequiredRules alone: " + err.Error()
	}
	return "", ""
}

// The restricted identity: a service account in a namespace of its own,
// bound to ClusterRole(identityRole).
const (
	home         = "msbench-k4-identity"
	identityRole = "msbench-k4-test"
)

// removeIdentity removes the restricted identity from a cluster the tests
// did not start.
func removeIdentity(ctx context.Context) error {
	return errors.Join(
		shared.admin.RbacV1().ClusterRoleBindings().Delete(ctx, identityRole, metav1.DeleteOptions{}),
		shared.admin.RbacV1().ClusterRoles().Delete(ctx, identityRole, metav1.DeleteOptions{}),
		shared.admin.CoreV1().Namespaces().Delete(ctx, home, metav1.DeleteOptions{}),
	)
}

// restrictedTarget makes a service account bound to ClusterRole alone,
// mints it a token with the TokenRequest API, and writes a kubeconfig
// that uses it.
func restrictedTarget(ctx context.Context, admin Target) (Target, error) {
	cfg, err := admin.Config(0)
	if err != nil {
		return Target{}, err
	}
	cs := shared.admin
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: home}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Target{}, err
	}
	if _, err := cs.CoreV1().ServiceAccounts(home).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: restrictedSA}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Target{}, err
	}
	role := ClusterRole(identityRole)
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Target{}, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: restrictedSA, Namespace: home}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return Target{}, err
	}
	hour := int64(3600)
	tok, err := cs.CoreV1().ServiceAccounts(home).CreateToken(ctx, restrictedSA, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return Target{}, fmt.Errorf("token request: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos[restrictedSA] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["restricted"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: restrictedSA}
	kc.CurrentContext = "restricted"
	file := filepath.Join(shared.c.StateDir(), "restricted.yaml")
	if err := clientcmd.WriteToFile(*kc, file); err != nil {
		return Target{}, err
	}
	target := Target{Kubeconfig: file, Context: "restricted"}
	restricted, err := target.Client(0)
	if err != nil {
		return Target{}, err
	}
	return target, clustertest.AwaitAllowed(ctx, restricted, "create", "namespaces")
}

// TestRunCycleWithLeastRights runs what a run does on a cluster with an
// identity that has RequiredRules alone: its namespace, the generators'
// account, a secret read by pods, provenance, CPU and memory of a pod
// that burns half a CPU and of one that idles, and the namespace's
// deletion with the run's context cancelled, as on Ctrl-C.
func TestRunCycleWithLeastRights(t *testing.T) {
	testCluster(t)
	useLeaseDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	n, err := CreateNamespace(ctx, shared.restricted, "k4-cycle", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("namespace %s ready for pods in %s", n.Name, time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { removeNamespace(t, n.Name) })
	ns, err := shared.admin.CoreV1().Namespaces().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := ns.Labels; l[LabelManagedBy] != "msbench" || l[LabelRun] != "k4-cycle" || l[LabelPID] != fmt.Sprint(os.Getpid()) || l[LabelBoot] != holder.Self().Boot || l[LabelHost] == "" {
		t.Errorf("labels %v", l)
	}
	if _, err := os.Stat(n.lease); err != nil {
		t.Errorf("no lease: %v", err)
	}

	kc := n.Client()
	forbidden(t, ctx, kc, n.Name)

	if err := n.CreateGeneratorAccount(ctx); err != nil {
		t.Fatal(err)
	}
	secret, err := n.CreateSecret(ctx, "work", "token")
	if err != nil {
		t.Fatal(err)
	}
	token, _ := secret.Value("token")
	for _, name := range []string{"burn", "idle"} {
		pod := workPod(name, secret)
		if _, err := kc.CoreV1().Pods(n.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"burn", "idle"} {
		pod := running(t, ctx, kc, n.Name, name)
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil {
				t.Errorf("pod %s of the generators' account has an API token mounted (volume %s)", name, v.Name)
			}
		}
		want := fmt.Sprintf("secret sha256 %x", sha256.Sum256([]byte(token)))
		poll(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			out, err := kc.CoreV1().Pods(n.Name).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
			return strings.Contains(string(out), want), err
		})
		if out, err := kc.CoreV1().Pods(n.Name).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx); err != nil || !strings.Contains(string(out), want) {
			t.Errorf("pod %s did not get the secret: log %q, %v", name, out, err)
		}
	}

	c, err := Describe(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster %+v", c)
	if c.ServerVersion != cluster.KubernetesVersion || len(c.Nodes) != 1 || c.Nodes[0].Kubelet != cluster.KubernetesVersion ||
		c.Nodes[0].CPUs < 1 || c.Nodes[0].MemoryBytes < 1<<30 || !strings.HasPrefix(c.Nodes[0].ContainerRuntime, "containerd://") ||
		c.Nodes[0].Kernel == "" || c.Nodes[0].OSImage == "" {
		t.Errorf("cluster %+v", c)
	}

	usage(t, ctx, kc, n.Name)

	cancelled, cancelRun := context.WithCancel(ctx)
	cancelRun()
	began = time.Now()
	if err := n.Delete(cancelled); err != nil {
		t.Fatal(err)
	}
	t.Logf("namespace deleted, its pods gone, in %s", time.Since(began).Round(time.Millisecond))
	if _, err := shared.admin.CoreV1().Namespaces().Get(ctx, n.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace still there: %v", err)
	}
	if _, err := os.Stat(n.lease); !os.IsNotExist(err) {
		t.Errorf("lease still there: %v", err)
	}
}

// forbidden checks that the identity of RequiredRules reads no secret,
// not even its own namespace's, and cannot touch nodes or grant rights,
// while it may exec into its pods and read the kubelets' stats.
func forbidden(t *testing.T, ctx context.Context, kc kubernetes.Interface, ns string) {
	t.Helper()
	for what, call := range map[string]func() error{
		"read its namespace's secrets": func() error {
			_, err := kc.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		},
		"read kube-system's secrets": func() error {
			_, err := kc.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		},
		"delete a node": func() error { return kc.CoreV1().Nodes().Delete(ctx, "msbench-node", metav1.DeleteOptions{}) },
		"bind a role": func() error {
			_, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("may %s: %v", what, err)
		}
	}
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Namespace: ns, Verb: "create", Resource: "pods", Subresource: "exec"},
		{Verb: "get", Resource: "nodes", Subresource: "proxy"},
		{Verb: "delete", Resource: "namespaces"},
	} {
		r, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
		if err != nil || !r.Status.Allowed {
			t.Errorf("may not %s %s/%s: %v", ra.Verb, ra.Resource, ra.Subresource, err)
		}
	}
}

// workPod runs the work image as a generator would: the generators'
// account, the secret from secretKeyRef, half a CPU.
func workPod(name string, secret *Secret) *corev1.Pod {
	var args []string
	if name == "burn" {
		args = []string{"-burn"}
	}
	half := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			ServiceAccountName: GeneratorAccount,
			Containers: []corev1.Container{{
				Name: "work", Image: workImage, ImagePullPolicy: corev1.PullNever, Args: args,
				Env:       []corev1.EnvVar{secret.Env("SECRET", "token")},
				Resources: corev1.ResourceRequirements{Requests: half, Limits: half},
			}},
		},
	}
}

func running(t *testing.T, ctx context.Context, kc kubernetes.Interface, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := poll(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		pod = p
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("pod %s running: %v (status %+v)", name, err, pod.Status)
	}
	return pod
}

// usageWindow is long enough for the kubelet to refresh its stats twice
// (every 10-15 s).
const usageWindow = 40 * time.Second

// usage samples the two pods: the burner's CPU seconds are near the
// window times its limit of half a CPU, the idler's near zero; bounds are
// one-sided and wide, the machine being busy.
func usage(t *testing.T, ctx context.Context, kc kubernetes.Interface, ns string) {
	t.Helper()
	s := NewSampler(kc, ns, time.Second)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(usageWindow)
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	burn, err := s.Usage("burn", "work")
	if err != nil {
		t.Fatal(err)
	}
	idle, err := s.Usage("idle", "work")
	if err != nil {
		t.Fatal(err)
	}
	nodes := s.NodeUsage()
	t.Logf("burn %+v\nidle %+v\nnodes %+v", burn, idle, nodes)
	span := burn.To.Sub(burn.From).Seconds()
	if span < 10 {
		t.Fatalf("the kubelet's stats span %.1f s of a %v window", span, usageWindow)
	}
	if rate := burn.CPUSeconds / span; rate < 0.2 || rate > 0.5*1.3 {
		t.Errorf("the burner used %.2f CPU seconds in %.1f s: %.2f of a CPU, want about 0.5 (its limit)", burn.CPUSeconds, span, rate)
	}
	if burn.PeakMemoryBytes < 256<<10 || burn.PeakMemoryBytes > 64<<20 {
		t.Errorf("the burner's peak memory %d bytes", burn.PeakMemoryBytes)
	}
	if idleSpan := idle.To.Sub(idle.From).Seconds(); idleSpan < 10 || idle.CPUSeconds > 0.02*idleSpan {
		t.Errorf("the idler used %.3f CPU seconds in %.1f s", idle.CPUSeconds, idleSpan)
	}
	if len(nodes) != 1 {
		t.Fatalf("nodes %+v", nodes)
	}
	if node := nodes[0]; node.To.Sub(node.From).Seconds() < 10 || node.CPUSeconds/node.To.Sub(node.From).Seconds() < 0.8*burn.CPUSeconds/span || node.Busy <= 0 || node.Busy > 1.2 {
		t.Errorf("the node's CPU %+v is less than the burner's", node)
	}
}

// TestSweepDeletesOnlyWhatADeadMsbenchCreated: an msbench killed with
// SIGKILL after creating its namespace leaves it to the next one's sweep,
// which deletes it; a namespace msbench did not create is left alone even
// when a lease names it.
func TestSweepDeletesOnlyWhatADeadMsbenchCreated(t *testing.T) {
	testCluster(t)
	dir := useLeaseDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	cmd, name := startChild(t, dir)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	const foreign = "k4-foreign"
	if _, err := shared.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: foreign}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNamespace(t, foreign) })
	forged := newLease(shared.restricted, foreign, "forged")
	forged.PID, forged.Start = 1<<22+2, 1 // never alive
	if err := forged.write(dir); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	s := sweep(ctx, dir)
	t.Logf("swept in %s: %v", time.Since(began).Round(time.Millisecond), s)
	if len(s.Deleted) != 1 || !strings.HasPrefix(s.Deleted[0], name+" ") || len(s.Left) != 1 || !strings.Contains(s.Left[0].Error(), foreign) || !strings.Contains(s.Left[0].Error(), "left alone") {
		t.Errorf("swept %v", s)
	}
	if _, err := shared.admin.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dead msbench's namespace is still there: %v", err)
	}
	if ns, err := shared.admin.CoreV1().Namespaces().Get(ctx, foreign, metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("the foreign namespace was touched: %v, %+v", err, ns)
	}
	if leases, _ := filepath.Glob(filepath.Join(dir, leasePrefix+"*")); len(leases) != 0 {
		t.Errorf("leases left: %v", leases)
	}
	if again := sweep(ctx, dir); !again.Empty() {
		t.Errorf("a second sweep found %v", again)
	}
}

// removeNamespace deletes a namespace the test made, waiting until it is
// gone so that the next -count finds its name free.
func removeNamespace(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), deleteWait)
	defer cancel()
	if err := deleteNamespace(ctx, shared.admin, name); err != nil {
		t.Errorf("namespace %s: %v", name, err)
	}
}

// testLog sends progress lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
