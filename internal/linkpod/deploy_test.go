package linkpod

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/studyimage"
)

// The integration test runs against a real cluster (clustertest), with the
// generator image (msbench) and the upstream's (internal/cluster's test
// server) imported once.
const (
	webImage = studyimage.Registry + "/linkpod-test-web:1"
	webPort  = 8080
)

var shared struct {
	clustertest.Shared
	c         *cluster.Cluster
	once      sync.Once
	generator string // the generator image's ref, imported
	err       error
}

func TestMain(m *testing.M) {
	shared.Netns = "msbench-linkpod-test"
	shared.Main(m)
}

func testCluster(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs pods on the local cluster")
	}
	shared.c = shared.Get(t)
	shared.once.Do(func() { shared.err = importImages(t) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
}

// importImages imports the generator image (msbench) and the upstream's
// (internal/cluster's test server).
func importImages(t *testing.T) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, err := checkout.Root("")
	if err != nil {
		return err
	}
	store := &image.Store{Dir: filepath.Join(root, ".cache", "images")}
	gen, err := studyimage.Generator(ctx, store, root)
	if err != nil {
		return err
	}
	archives := t.TempDir()
	genArchive, err := gen.WriteArchive(archives)
	if err != nil {
		return err
	}
	web, err := store.GoStatic(ctx, image.GoBinary{Dir: root, Pkg: "./internal/cluster/testdata/web", Path: "/web",
		Args: []string{"-addr", ":" + strconv.Itoa(webPort)}})
	if err != nil {
		return err
	}
	webArchive := filepath.Join(archives, "web.tar")
	if err := web.WriteArchive(webArchive, webImage); err != nil {
		return err
	}
	for _, a := range []string{genArchive, webArchive} {
		if err := shared.c.ImportImage(ctx, a); err != nil {
			return err
		}
	}
	shared.generator = gen.Ref
	return nil
}

// TestLinkPod puts a link pod with 10 ms each way in front of a server pod
// and reaches both from the cluster's network: through the link's Service
// a request takes at least 20 ms longer than directly, a reset fault set
// through the API makes requests fail until cleared, and Stop leaves no
// pod.
func TestLinkPod(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := namespace(t, ctx)
	web := serverPod(t, ctx, ns)

	began := time.Now()
	l, err := Deploy(ctx, ns, "client>web", links.Spec{Latency: 10 * time.Millisecond}, web, shared.generator)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s ready at %s in %s", l, l.Addr(), time.Since(began).Round(time.Millisecond))
	defer l.Stop(ctx)

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: shared.c.DialContext}}
	direct, through := "http://"+web+"/", "http://"+l.Addr()+"/"
	// kube-proxy writes the new Service's rules on its own schedule.
	awaitAnswer(t, ctx, client, through)
	// Interleaved on kept-alive connections, so that a busy moment slows
	// both; the least of each is its path's own cost.
	var fastestDirect, fastestThrough time.Duration
	for range 10 {
		d := timed(t, client, direct)
		l := timed(t, client, through)
		if l < 20*time.Millisecond {
			t.Errorf("a request through a 10 ms link took %s, under its 20 ms round trip", l)
		}
		if fastestDirect == 0 || d < fastestDirect {
			fastestDirect = d
		}
		if fastestThrough == 0 || l < fastestThrough {
			fastestThrough = l
		}
	}
	t.Logf("fastest of 10: direct %s, through the link %s", fastestDirect, fastestThrough)
	// The link's 20 ms come on top of the direct path, with two hops
	// more; 5 ms of the 20 are left to a direct path whose every request
	// was slowed.
	if fastestThrough-fastestDirect < 15*time.Millisecond {
		t.Errorf("the link adds %s to a round trip, want about 20 ms", fastestThrough-fastestDirect)
	}
	if s, err := l.Stats(ctx); err != nil || s.Accepted < 1 || s.Fault != links.None {
		t.Errorf("stats %+v, %v", s, err)
	}

	if err := l.SetFault(ctx, links.Reset, 0); err != nil {
		t.Fatal(err)
	}
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: shared.c.DialContext, DisableKeepAlives: true}}
	for _, c := range []*http.Client{client, fresh} {
		if body, err := clustertest.Get(context.Background(), c, through); err == nil {
			t.Errorf("a request through a reset link answered %q", body)
		}
	}
	if s, err := l.Stats(ctx); err != nil || s.Fault != links.Reset {
		t.Errorf("stats after the reset fault %+v, %v", s, err)
	}
	if err := l.SetFault(ctx, links.SlowClose, 3*time.Second); err != nil {
		t.Errorf("slow_close with a delay: %v", err)
	}
	if err := l.SetFault(ctx, links.Timeout, time.Second); err == nil || !strings.Contains(err.Error(), "slow_close only") {
		t.Errorf("a delay for timeout: %v, want it refused", err)
	}
	if err := l.SetFault(ctx, links.None, 0); err != nil {
		t.Fatal(err)
	}
	if body, err := clustertest.Get(context.Background(), fresh, through); err != nil || !strings.Contains(body, "hello") {
		t.Errorf("after the fault is cleared: %q, %v", body, err)
	}

	pod := l.PodName()
	if err := l.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Stop(ctx); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	left, err := ns.Client().CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: LabelLink})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 || l.PodName() != "" {
		t.Errorf("after Stop: %d link pods (was %s), PodName %q", len(left.Items), pod, l.PodName())
	}
}

// Deploy refuses an upstream off the cluster's networks before creating
// anything, and a pod that cannot start fails it at once, leaving no pod.
func TestDeployRefuses(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := namespace(t, ctx)
	if _, err := Deploy(ctx, ns, "x>public", links.Spec{}, "8.8.8.8:53", shared.generator); err == nil || !strings.Contains(err.Error(), "private") {
		t.Errorf("a public upstream: %v", err)
	}
	began := time.Now()
	_, err := Deploy(ctx, ns, "x>y", links.Spec{}, "10.252.0.99:80", studyimage.Registry+"/linkpod-no-such-image:1")
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") {
		t.Errorf("an image the node lacks: %v", err)
	}
	t.Logf("refused in %s: %v", time.Since(began).Round(time.Millisecond), err)
	pods, err := ns.Client().CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods left", len(pods.Items))
	}
}

// namespace is a run's namespace of the test's own, deleted at its end.
func namespace(t *testing.T, ctx context.Context) *kube.Namespace {
	t.Helper()
	ns, err := kube.CreateNamespace(ctx, kube.Target{Kubeconfig: shared.c.Kubeconfig()}, "linkpod-test", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Delete(context.Background()); err != nil {
			t.Errorf("delete %s: %v", ns, err)
		}
	})
	return ns
}

// serverPod runs the test server behind a Service and returns the
// Service's ClusterIP:port once the server answers there.
func serverPod(t *testing.T, ctx context.Context, ns *kube.Namespace) string {
	t.Helper()
	labels := map[string]string{"app": "web"}
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "web", Image: webImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
	if _, err := ns.Client().CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: webPort, TargetPort: intstr.FromInt32(webPort)}}},
	}
	created, err := ns.Client().CoreV1().Services(ns.Name).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(created.Spec.ClusterIP, strconv.Itoa(webPort))
	awaitAnswer(t, ctx, &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: shared.c.DialContext}}, "http://"+addr+"/")
	return addr
}

// awaitAnswer waits, within two minutes, until url answers.
func awaitAnswer(t *testing.T, ctx context.Context, client *http.Client, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		_, err := clustertest.Get(context.Background(), client, url)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered: %v", url, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func timed(t *testing.T, client *http.Client, url string) time.Duration {
	t.Helper()
	began := time.Now()
	if _, err := clustertest.Get(context.Background(), client, url); err != nil {
		t.Fatal(err)
	}
	return time.Since(began)
}
