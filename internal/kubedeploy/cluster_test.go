package kubedeploy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
)

// The integration tests run on a real cluster (clustertest).
var shared = clustertest.Shared{Netns: "msbench-kube-kd"}

func TestMain(m *testing.M) { shared.Main(m) }

func testCluster(t *testing.T) *cluster.Cluster { return shared.Get(t) }

// faasGateway builds faas-gateway's RPC server and net/http gateway,
// builds their image and imports it into the cluster, and returns the
// configuration of its variant nethttp-pooled-0ms in a namespace of the
// test's own (named after run), deleted at the test's end.
func faasGateway(ctx context.Context, t *testing.T, c *cluster.Cluster, run string) Config {
	t.Helper()
	store := imagetest.Store(t)
	root, err := checkout.Root("")
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(filepath.Join(root, "studies", "faas-gateway", "study.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	var v study.Variant
	for _, m := range s.Matrix() {
		if m.Get("framework") == "nethttp" && m.Get("policy") == "pooled" && m.Get("delay") == "0ms" {
			v = m
		}
	}
	build := t.TempDir()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", build+"/", "./rpcserver", "./gateway-nethttp")
	cmd.Dir = filepath.Join(root, "studies", "faas-gateway", "services")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build faas-gateway: %v\n%s", err, out)
	}
	values := map[string]string{"root": root, "build.faas": build}
	specs, err := studyimage.Plan(s, []study.Variant{v}, values)
	if err != nil {
		t.Fatal(err)
	}
	built, err := studyimage.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, name := range []string{"rpc", "gateway"} {
		b := studyimage.For(built, v.Key(), name)
		archive, err := b.WriteArchive(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ImportImage(ctx, archive); err != nil {
			t.Fatal(err)
		}
		images[name] = b.Ref
	}
	return Config{Namespace: namespace(ctx, t, c, run), Study: s, Variant: v, Values: values, Images: images, Progress: t.Logf}
}

// namespace creates a namespace of the test's own, deleted at its end.
func namespace(ctx context.Context, t *testing.T, c *cluster.Cluster, run string) *kube.Namespace {
	t.Helper()
	n, err := kube.CreateNamespace(ctx, kube.Target{Kubeconfig: c.Kubeconfig()}, run, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return n
}

// eventually calls f until it returns nil, for at most bound: a new
// Service's first connection can take seconds, and kube-proxy follows a
// pod's end on its own schedule.
func eventually(t *testing.T, bound time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, bound, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// faas-gateway's nethttp-pooled-0ms on the cluster: the gateway computes
// through the RPC server on its Service's address; a killed RPC server
// stays down until restarted, on the same address; Stop leaves nothing.
func TestFaasGatewayOnTheCluster(t *testing.T) {
	c := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := faasGateway(ctx, t, c, "kubedeploy-faas")
	n, logs := cfg.Namespace, t.TempDir()
	cfg.LogDir = logs
	// Placed on a quarter of a core, memory capped: requests = limits.
	cfg.Study.Service("rpc").Limits.MemoryBytes = 256 << 20
	cfg.CPUs = map[string]float64{"rpc": 0.25}
	began := time.Now()
	d, err := Deploy(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("deployed in %v", time.Since(began).Round(time.Millisecond))
	defer d.Stop()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: c.DialContext, DisableKeepAlives: true}}
	gateway := "http://" + d.Addr("gateway")
	if vals := d.Values(); vals["service.rpc.addr"] != d.Addr("rpc") || vals["service.gateway.port"] != fmt.Sprint(Port) {
		t.Errorf("values %v", vals)
	}
	works := func() error {
		if _, err := clustertest.Get(ctx, client, gateway+"/healthz"); err != nil {
			return err
		}
		body, err := clustertest.Get(ctx, client, gateway+"/math?n=1000")
		if err == nil && !strings.Contains(body, "3.1") {
			err = fmt.Errorf("/math answered %q, want π", body)
		}
		return err
	}
	eventually(t, 30*time.Second, "the gateway through its Service", works)

	rpc := d.Instances("rpc")
	if len(rpc) != 1 || rpc[0].Pod == "" || rpc[0].Container != "rpc" || !rpc[0].Ready.After(rpc[0].Started) || rpc[0].QoS != "Guaranteed" {
		t.Fatalf("rpc instances %+v", rpc)
	}
	if gw := d.Instances("gateway"); len(gw) != 1 || gw[0].QoS != "BestEffort" {
		t.Errorf("gateway instances %+v", gw)
	}
	addr := rpc[0].Addr
	if err := d.Kill("rpc"); err != nil {
		t.Fatal(err)
	}
	if in := d.Instances("rpc")[0]; in.Pod != "" {
		t.Errorf("killed rpc still has pod %s", in.Pod)
	}
	listened(t, logs, "rpc")
	eventually(t, 30*time.Second, "a request failing once rpc is killed", func() error {
		if _, err := clustertest.Get(ctx, client, gateway+"/math?n=1000"); err == nil {
			return fmt.Errorf("/math still answers")
		}
		return nil
	})
	if in, crashed := d.Crashed(); crashed {
		t.Errorf("%s counted as crashed after Kill", in.Name)
	}
	if err := d.Restart(ctx, "rpc"); err != nil {
		t.Fatal(err)
	}
	after := d.Instances("rpc")[0]
	if after.Addr != addr || after.Pod == "" || after.Pod == rpc[0].Pod || !after.Ready.After(after.Started) {
		t.Errorf("restarted rpc %+v, was %+v", after, rpc[0])
	}
	t.Logf("rpc restarted, ready in %v", after.Ready.Sub(after.Started).Round(time.Millisecond))
	eventually(t, 30*time.Second, "the gateway after rpc's restart", works)
	if in, crashed := d.Crashed(); crashed {
		t.Errorf("%s counted as crashed", in.Name)
	}

	// Terminate is no crash; a pod gone without a fault of the step's
	// is one, though its ReplicaSet replaces it.
	if err := d.Terminate("gateway"); err != nil {
		t.Fatal(err)
	}
	cs := n.Client()
	if pods, err := cs.CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{LabelSelector: LabelService + "=gateway"}); err != nil || len(pods.Items) != 0 {
		t.Errorf("the terminated gateway has %d pods, %v", len(pods.Items), err)
	}
	listened(t, logs, "gateway")
	if in, crashed := d.Crashed(); crashed {
		t.Errorf("%s counted as crashed after Terminate", in.Name)
	}
	zero := int64(0)
	if err := cs.CoreV1().Pods(n.Name).Delete(ctx, d.Instances("rpc")[0].Pod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "rpc's deleted pod reported", func() error {
		if in, crashed := d.Crashed(); !crashed || in.Name != "rpc" {
			return fmt.Errorf("crashed: %v %q", crashed, in.Name)
		}
		return nil
	})

	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	leftNothing(ctx, t, n)
}

// listened checks that an instance's log holds its pod's output, which
// says where it listens.
func listened(t *testing.T, dir, name string) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil || !strings.Contains(string(log), "listening on") {
		t.Errorf("%s's log lacks its output (%v):\n%s", name, err, log)
	}
}

// A pod that fails ends Deploy at once, with the reason and what the
// service said, not at the readiness timeout; nothing is left. The RPC
// server told to bind every interface refuses, in a pod as on a machine;
// an image the node cannot have never runs.
func TestFailedPodEndsDeploy(t *testing.T) {
	c := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name  string
		edit  func(cfg Config)
		wants []string
	}{
		{"exits", func(cfg Config) {
			cfg.Study.Service("rpc").Env = [][2]string{{"ADDR", "0.0.0.0:{port}"}}
		}, []string{"deploy rpc: pod rpc-", "exit status 1", `"0.0.0.0:8080"`, "not a loopback address"}},
		// Named for the local cluster, it is never pulled: no registry
		// holds it.
		{"no image", func(cfg Config) {
			cfg.Images["rpc"] = "msbench.local/no-such-image:1"
		}, []string{"deploy rpc: pod rpc-", "ErrImageNeverPull", "it never ran"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := faasGateway(ctx, t, c, "kubedeploy-fail")
			// The bound the failure must not wait for.
			cfg.Study.Service("rpc").Ready.Timeout = 10 * time.Minute
			tc.edit(cfg)
			began := time.Now()
			d, err := Deploy(ctx, cfg)
			took := time.Since(began)
			if err == nil {
				d.Stop()
				t.Fatal("deployed")
			}
			t.Logf("failed in %v: %v", took.Round(time.Millisecond), err)
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q", want)
				}
			}
			if took > 3*time.Minute {
				t.Errorf("failed after %v, as if it waited for the timeout", took)
			}
			leftNothing(ctx, t, cfg.Namespace)
		})
	}
}

// leftNothing checks that the namespace holds no pod, Service or
// ReplicaSet.
func leftNothing(ctx context.Context, t *testing.T, n *kube.Namespace) {
	t.Helper()
	cs := n.Client()
	pods, err := cs.CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left: %d, %v", len(pods.Items), err)
	}
	services, err := cs.CoreV1().Services(n.Name).List(ctx, metav1.ListOptions{})
	if err != nil || len(services.Items) != 0 {
		t.Errorf("Services left: %d, %v", len(services.Items), err)
	}
	sets, err := cs.AppsV1().ReplicaSets(n.Name).List(ctx, metav1.ListOptions{})
	if err != nil || len(sets.Items) != 0 {
		t.Errorf("ReplicaSets left: %d, %v", len(sets.Items), err)
	}
}

// A deployment cancelled half-way (Ctrl-C while the gateway starts)
// takes back what it started, though its context is gone.
func TestCancelledDeployLeavesNothing(t *testing.T) {
	c := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := faasGateway(ctx, t, c, "kubedeploy-cancel")
	run, interrupt := context.WithCancel(ctx)
	cfg.Progress = func(format string, args ...any) {
		t.Logf(format, args...)
		if strings.Contains(fmt.Sprintf(format, args...), "started rpc") {
			interrupt()
		}
	}
	d, err := Deploy(run, cfg)
	if err == nil {
		d.Stop()
		t.Fatal("deployed, though interrupted")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "gateway") {
		t.Errorf("error %v, want the gateway's start interrupted", err)
	}
	leftNothing(ctx, t, cfg.Namespace)
}

// Secrets reach the service's process, never its pod's spec: the RPC
// server's command prints what the kubelet filled in before it starts
// the server, a secret in an argument and in a variable, one beginning
// with the other and holding a '$'. Neither is in the ReplicaSet or the
// pod as the API gives them, nor in the instance's saved log or in the
// error of a pod that printed one and failed; Stop deletes the Secret.
func TestSecretsOnTheCluster(t *testing.T) {
	c := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := faasGateway(ctx, t, c, "kubedeploy-secrets")
	n, cs := cfg.Namespace, cfg.Namespace.Client()
	one := rand.Text()
	two := one + "-x$y"
	cfg.Values["x.one"], cfg.Values["x.two"] = one, two
	cfg.Secrets = []string{one, two}
	cfg.LogDir = t.TempDir()
	rpc := cfg.Study.Service("rpc")
	rpc.Env = append(rpc.Env, [2]string{"S", "{x.one}/{x.two}"})
	secretSelector := metav1.ListOptions{LabelSelector: LabelInstance + "=" + objectName("", "secrets")}
	withholds := func(what, text string) {
		t.Helper()
		for _, s := range []string{one, two, base64.StdEncoding.EncodeToString([]byte(one)), base64.StdEncoding.EncodeToString([]byte(two))} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q:\n%s", what, s, text)
			}
		}
	}

	// A service that prints a secret and exits.
	rpc.Command = "/bin/sh -c 'echo {x.one}; exit 3'"
	if d, err := Deploy(ctx, cfg); err == nil {
		d.Stop()
		t.Fatal("deployed a service that exits")
	} else {
		t.Logf("failed as it should: %v", err)
		withholds("Deploy's error", err.Error())
		if !strings.Contains(err.Error(), "[withheld]") {
			t.Errorf("Deploy's error does not quote the service's output, withheld: %v", err)
		}
	}
	if list, err := cs.CoreV1().Secrets(n.Name).List(ctx, secretSelector); err != nil || len(list.Items) != 0 {
		t.Errorf("a failed Deploy left %d Secrets (%v)", len(list.Items), err)
	}

	rpc.Command = `/bin/sh -c 'printf "cmd=%s env=%s\n" "$0" "$S"; exec {build.faas}/rpcserver' '{x.two}'`
	d, err := Deploy(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if list, err := cs.CoreV1().Secrets(n.Name).List(ctx, secretSelector); err != nil || len(list.Items) != 1 {
		t.Fatalf("%d Secrets of the deployment (%v), want 1", len(list.Items), err)
	}
	pod := d.Instances("rpc")[0].Pod
	out, err := cs.CoreV1().Pods(n.Name).GetLogs(pod, &corev1.PodLogOptions{Container: "rpc"}).DoRaw(ctx)
	if want := "cmd=" + two + " env=" + one + "/" + two + "\n"; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("the service printed %q (%v), want it to begin with %q", out, err, want)
	}
	sets, err := cs.AppsV1().ReplicaSets(n.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, obj := range map[string]any{"the ReplicaSets' JSON": sets, "the pods' JSON": pods} {
		text, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		withholds(what, string(text))
		if !strings.Contains(string(text), "$(MSBENCH_SECRET_0)") {
			t.Errorf("%s names no secret's variable:\n%s", what, text)
		}
	}

	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if list, err := cs.CoreV1().Secrets(n.Name).List(ctx, secretSelector); err != nil || len(list.Items) != 0 {
		t.Errorf("Stop left %d Secrets (%v)", len(list.Items), err)
	}
	log, err := os.ReadFile(filepath.Join(cfg.LogDir, "rpc.log"))
	if err != nil || !strings.Contains(string(log), "cmd=[withheld] env=[withheld]/[withheld]") {
		t.Errorf("the saved log (%v), want the line with the secrets withheld:\n%s", err, log)
	}
	withholds("the saved log", string(log))
	leftNothing(ctx, t, n)
}
