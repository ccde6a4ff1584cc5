package kubeload

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/studyimage"
)

// The integration tests run on a real cluster (clustertest), with the
// generator image and a target server's imported once.
var shared = clustertest.Shared{Netns: "msbench-kube-kl"}

const serverImage = "msbench.local/kubeload-test-server:1"

var images struct {
	once      sync.Once
	generator string // the generator image's ref
	err       error
}

func TestMain(m *testing.M) { shared.Main(m) }

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// testCluster returns the cluster once the images are on it.
func testCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs generator pods on the local cluster")
	}
	c := shared.Get(t)
	images.once.Do(func() { images.generator, images.err = importImages(t, c) })
	if images.err != nil {
		t.Fatal(images.err)
	}
	return c
}

// importImages builds and imports the generator image and the target
// server's, and returns the generator's ref.
func importImages(t *testing.T, c *cluster.Cluster) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	source, err := checkout.Root("")
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "msbench-kubeload-images-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	store := &image.Store{Dir: filepath.Join(source, ".cache", "images")}
	gen, err := studyimage.Generator(ctx, store, source)
	if err != nil {
		return "", err
	}
	genArchive, err := gen.WriteArchive(tmp)
	if err != nil {
		return "", err
	}
	serverArchive := filepath.Join(tmp, "server.tar")
	if err := cluster.StaticImage(ctx, source, c.StateDir(), "./internal/kubeload/testdata/server", "server", serverImage, serverArchive, testLog{t}); err != nil {
		return "", err
	}
	for _, a := range []string{genArchive, serverArchive} {
		if err := c.ImportImage(ctx, a); err != nil {
			return "", err
		}
	}
	return gen.Ref, nil
}

// namespace is a namespace of the test's own, deleted at its end.
func namespace(t *testing.T, ctx context.Context) *kube.Namespace {
	t.Helper()
	n, err := kube.CreateNamespace(ctx, kube.Target{Kubeconfig: shared.Get(t).Kubeconfig()}, "kubeload-test", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(context.Background()); err != nil {
			t.Errorf("delete %s: %v", n, err)
		}
	})
	return n
}

// server starts the target server's pod and returns its address, and
// the cluster's pod networks, which the generators may load.
func server(t *testing.T, ctx context.Context, n *kube.Namespace) (netip.Addr, []netip.Prefix) {
	t.Helper()
	cs := n.Client()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "server", Image: serverImage, ImagePullPolicy: corev1.PullNever,
				Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
	if _, err := cs.CoreV1().Pods(n.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ip netip.Addr
	deadline := time.Now().Add(3 * time.Minute)
	for {
		p, err := cs.CoreV1().Pods(n.Name).Get(ctx, "server", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if podReady(p) {
			if ip, err = netip.ParseAddr(p.Status.PodIP); err != nil {
				t.Fatal(err)
			}
			break
		}
		if why := stuck(p); why != "" || time.Now().After(deadline) {
			t.Fatalf("server pod not ready: %s %s", p.Status.Phase, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return ip, podNetworks(t, ctx, cs, ip)
}

// podNetworks are the nodes' pod ranges, or the server's address alone
// when the nodes give none.
func podNetworks(t *testing.T, ctx context.Context, cs kubernetes.Interface, ip netip.Addr) []netip.Prefix {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Prefix
	for _, n := range nodes.Items {
		for _, c := range n.Spec.PodCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		out = []netip.Prefix{netip.PrefixFrom(ip, ip.BitLen())}
	}
	return out
}

// TestPoolRunsMergedLoads is the test issue 24 names, on the cluster: a
// pool of two generator pods sends an open-model load of 300 requests at
// 150 req/s and a closed-model one; every request of the schedule is
// there once, and the merged p50 and p99 are those of all the records
// concatenated, within HDR's precision. Fetch returns a body from inside
// the cluster and refuses a target outside it; Stop leaves no pod.
func TestPoolRunsMergedLoads(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n := namespace(t, ctx)
	ip, nets := server(t, ctx, n)
	began := time.Now()
	pool, err := Start(ctx, Config{Namespace: n, Image: images.generator, Generators: 2, CPUs: 0.5, Networks: nets})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2 generator pods ready in %s (exec round trip %s)", time.Since(began).Round(time.Millisecond), pool.probe.Round(time.Millisecond))
	stopped := false
	defer func() {
		if !stopped {
			pool.Stop()
		}
	}()
	url := "http://" + netip.AddrPortFrom(ip, 8080).String()

	loads := []struct {
		name     string
		spec     loadspec.Spec
		schedule int64 // requests the schedule holds
	}{
		{"open", loadspec.Spec{Open: true, Rate: 150, Duration: 2 * time.Second, Connections: 8, Targets: []load.Target{{URL: url + "/"}}}, 300},
		{"closed", loadspec.Spec{Users: 6, Requests: 240, Targets: []load.Target{{URL: url + "/"}}}, 240},
	}
	for _, l := range loads {
		t.Run(l.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen load.Snapshot
			began := time.Now()
			m, err := pool.Run(ctx, l.spec, filepath.Join(t.TempDir(), "generators"), func(s load.Snapshot) {
				mu.Lock()
				seen = s
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			s := m.Summary
			t.Logf("%d requests, %d unsent, %.1f req/s, p50 %.3f ms, p99 %.3f ms, in %s; warnings %v", s.Requests, s.Unsent, s.ThroughputRPS, s.Latency.P50, s.Latency.P99, time.Since(began).Round(time.Millisecond), s.Warnings)
			if s.Requests+s.Unsent != l.schedule || s.Successes != s.Requests {
				t.Errorf("%d requests (%d ok) and %d unsent, want the schedule's %d, all ok", s.Requests, s.Successes, s.Unsent, l.schedule)
			}
			// One-sided and generous: the machine is busy.
			if l.spec.Open && s.Requests < l.schedule*9/10 {
				t.Errorf("%d of %d requests sent", s.Requests, l.schedule)
			}
			if len(m.Generators) != 2 || m.Generators[0].Requests == 0 || m.Generators[1].Requests == 0 {
				t.Errorf("generators %+v, want 2 that each sent", m.Generators)
			}
			for _, u := range pool.Usage(m) {
				if u.CPUS <= 0 || u.Pod == "" {
					t.Errorf("usage %+v", u)
				}
			}
			// Progress comes once a second: the closed load is shorter.
			if mu.Lock(); l.spec.Open && seen.Requests == 0 {
				t.Errorf("progress saw no request: %+v", seen)
			}
			mu.Unlock()

			step := results.StepDir(t.TempDir())
			w, err := step.CreateRecords(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.WriteRecords(w, records.Segment{}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			rows, err := step.ReadRecords()
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(rows)) != s.Requests {
				t.Fatalf("%d records, %d requests", len(rows), s.Requests)
			}
			lats := make([]float64, len(rows))
			seqs := map[int64]bool{}
			for i, r := range rows {
				lats[i] = r.LatencyMs
				seqs[r.Seq] = true
			}
			if len(seqs) != len(rows) {
				t.Errorf("%d distinct sequence numbers in %d records", len(seqs), len(rows))
			}
			slices.Sort(lats)
			rank := func(q float64) float64 { return lats[int(math.Ceil(q*float64(len(lats))))-1] }
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"p50", s.Latency.P50, rank(0.50)}, {"p99", s.Latency.P99, rank(0.99)}} {
				// HDR at 3 significant digits reports a value's bucket's
				// top; a record keeps its latency to the nanosecond.
				if c.got < c.want*0.999-1e-6 || c.got > c.want*1.001+1e-6 {
					t.Errorf("merged %s %.4f ms, of all records concatenated %.4f ms: beyond HDR's precision", c.name, c.got, c.want)
				}
			}
		})
	}

	status, header, body, err := pool.Fetch(ctx, "POST", url+"/echo", http.Header{"X-Ask": {"yes"}}, []byte("hello"))
	if err != nil || status != http.StatusOK || string(body) != "POST hello" || header.Get("X-Echo") != "yes" {
		t.Errorf("fetch: %d %v %q, %v; want 200 with X-Echo: yes and \"POST hello\"", status, header, body, err)
	}
	if _, _, _, err := pool.Fetch(ctx, "GET", "http://192.0.2.1/", nil, nil); err == nil {
		t.Error("fetch of a target outside the cluster: no error")
	}
	if _, err := pool.Run(ctx, loadspec.Spec{Users: 2, Requests: 2, Targets: []load.Target{{URL: "http://192.0.2.1/"}}}, t.TempDir(), nil); err == nil {
		t.Error("a load of a target outside the cluster: no error")
	}
	// A host the study names but the pods cannot resolve passes the
	// runner's checks and fails in the generators: the Run fails with
	// what they said.
	named := *pool
	named.c.AllowHosts = []string{"no-such-host.invalid"}
	_, err = named.Run(ctx, loadspec.Spec{Users: 2, Requests: 2, Targets: []load.Target{{URL: "http://no-such-host.invalid/"}}}, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "stderr ends") || !strings.Contains(err.Error(), "no-such-host.invalid") {
		t.Errorf("a load the generators fail: %v, want their stderr's end naming the host", err)
	}

	names := pool.Pods()
	stopped = true
	if err := pool.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, err := n.Client().CoreV1().Pods(n.Name).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("generator pod %s still there after Stop: %v", name, err)
		}
	}
}

// TestStartLeavesNothingOnError: generators of an image the node does
// not have fail Start, naming why, and leave no pod.
func TestStartLeavesNothingOnError(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n := namespace(t, ctx)
	began := time.Now()
	_, err := Start(ctx, Config{Namespace: n, Image: "msbench.local/no-such-generator:0", Generators: 2})
	t.Logf("failed in %s: %v", time.Since(began).Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "no-such-generator") {
		t.Errorf("Start with a missing image: %v, want an error naming it", err)
	}
	pods, err := n.Client().CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + component})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d generator pods left", len(pods.Items))
	}
}

// TestCancelledRun: a Run whose context ends (Ctrl-C) returns at once,
// its generators still sending; Stop then takes their pods down within
// their grace, leaving none.
func TestCancelledRun(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pool, run := longRun(t, ctx, 1)
	began := time.Now()
	run.stop()
	select {
	case err := <-run.done:
		if err == nil {
			t.Error("a cancelled Run returned no error")
		}
		t.Logf("cancelled Run returned in %s: %v", time.Since(began).Round(time.Millisecond), err)
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled Run did not return in 30 s")
	}
	began = time.Now()
	if err := pool.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop with a load in flight took %s", time.Since(began).Round(time.Millisecond))
	if _, err := pool.c.Namespace.Client().CoreV1().Pods(pool.c.Namespace.Name).Get(ctx, pool.Pods()[0], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("generator pod still there after Stop: %v", err)
	}
}

// TestRunFailsWhenAGeneratorDies: a generator pod deleted during a
// minute's load fails the Run at once, naming it, and the other
// generator is stopped rather than waited for.
func TestRunFailsWhenAGeneratorDies(t *testing.T) {
	testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pool, run := longRun(t, ctx, 2)
	defer pool.Stop()
	defer run.stop()
	gone := pool.Pods()[1]
	zero := int64(0)
	began := time.Now()
	if err := pool.c.Namespace.Client().CoreV1().Pods(pool.c.Namespace.Name).Delete(ctx, gone, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-run.done:
		t.Logf("Run failed %s after the delete: %v", time.Since(began).Round(time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), "generator 2 of 2") || strings.Contains(err.Error(), "generator 1 of 2") {
			t.Errorf("Run with generator 2's pod deleted: %v, want an error of generator 2 alone", err)
		}
	case <-time.After(45 * time.Second):
		t.Fatal("Run went on for 45 s with a generator gone")
	}
}

// running is a Run in flight: done receives its error, stop cancels it.
type running struct {
	done chan error
	stop context.CancelFunc
}

// longRun starts a pool of n generators and a minute's load of a server
// pod, and returns once the generators have sent.
func longRun(t *testing.T, ctx context.Context, n int) (*Pool, running) {
	t.Helper()
	ns := namespace(t, ctx)
	ip, nets := server(t, ctx, ns)
	pool, err := Start(ctx, Config{Namespace: ns, Image: images.generator, Generators: n, Networks: nets})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	r := running{done: make(chan error, 1), stop: stop}
	var mu sync.Mutex
	sent := false
	spec := loadspec.Spec{Open: true, Rate: 50, Duration: time.Minute, Connections: 2 * n, Targets: []load.Target{{URL: "http://" + netip.AddrPortFrom(ip, 8080).String() + "/"}}}
	work := t.TempDir()
	go func() {
		_, err := pool.Run(runCtx, spec, work, func(s load.Snapshot) {
			mu.Lock()
			sent = sent || s.Requests > 0
			mu.Unlock()
		})
		r.done <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		ok := sent
		mu.Unlock()
		if ok {
			return pool, r
		}
		if time.Now().After(deadline) {
			stop()
			pool.Stop()
			t.Fatal("the generators sent nothing in a minute")
		}
	}
}
