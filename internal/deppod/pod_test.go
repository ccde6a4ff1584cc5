package deppod

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
)

func TestServiceValues(t *testing.T) {
	ready := Event{Event: "ready", Kind: deps.Postgres, Addr: "10.88.0.7:5432", Values: map[string]string{
		"addr": "10.88.0.7:5432", "host": "10.88.0.7", "port": "5432", "user": "msbench", "database": "msbench",
		"password": PasswordPlaceholder,
		"url":      "postgres://msbench:" + PasswordPlaceholder + "@10.88.0.7:5432/msbench?sslmode=disable",
	}}
	got, err := serviceValues(ready, "10.96.0.12:5432", "Secret123Secret123")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"addr": "10.96.0.12:5432", "host": "10.96.0.12", "port": "5432", "user": "msbench", "database": "msbench",
		"password": "Secret123Secret123",
		"url":      "postgres://msbench:Secret123Secret123@10.96.0.12:5432/msbench?sslmode=disable",
	}
	if !maps.Equal(got, want) {
		t.Errorf("values\n got %v\nwant %v", got, want)
	}
	if ready.Values["host"] != "10.88.0.7" {
		t.Error("serviceValues changed the event's own values")
	}
	for name, tt := range map[string]struct {
		ready    Event
		addr     string
		password string
	}{
		"no address in the line":   {Event{Values: map[string]string{"url": "redis://x"}}, "10.96.0.1:6379", ""},
		"no port in the service":   {ready, "10.96.0.12", "Secret123Secret123"},
		"a password but no secret": {ready, "10.96.0.12:5432", ""},
	} {
		if _, err := serviceValues(tt.ready, tt.addr, tt.password); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestScanEvents(t *testing.T) {
	log := `{"event":"ready","kind":"postgres","addr":"10.0.0.1:5432","seconds":2}
a server's message
{"event":"restarted","kind":"postgres","addr":"10.0.0.1:5432","seconds":1.5}
{"not":"an event"}
{"event":"restarted","kind":"postgres","addr":"10.0.0.1:5432","seconds":2.5}
`
	tests := []struct {
		event   string
		nth     int
		seconds float64
		tail    []string // when not found
	}{
		{"ready", 1, 2, nil},
		{"restarted", 1, 1.5, nil},
		{"restarted", 2, 2.5, nil},
		{"restarted", 3, 0, []string{"a server's message", `{"not":"an event"}`}},
	}
	for _, tt := range tests {
		e, tail, err := scanEvents(strings.NewReader(log), tt.event, tt.nth)
		if tt.tail != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Join(tail, "|") != strings.Join(tt.tail, "|") {
				t.Errorf("%s #%d: %v, tail %q; want EOF and %q", tt.event, tt.nth, err, tail, tt.tail)
			}
			continue
		}
		if err != nil || e.Event != tt.event || e.Seconds != tt.seconds {
			t.Errorf("%s #%d: %+v, %v; want its line of %gs", tt.event, tt.nth, e, err, tt.seconds)
		}
	}
}

// The pod's spec carries the password only as the Secret's reference, and
// the study's limits as the container's.
func TestPodSpec(t *testing.T) {
	p := &Pod{Name: "db", Kind: deps.Postgres, base: "dep-db-abcdef", image: "msbench.local/msbench-postgres:1",
		limits: study.Limits{CPUs: 0.5, MemoryBytes: 256 << 20}, port: 5432, password: "Secret123Secret123"}
	pod := p.spec("dep-db-abcdef-1")
	data, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), p.password) || strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte(p.password))) {
		t.Errorf("the pod's spec holds the password: %s", data)
	}
	c := pod.Spec.Containers[0]
	if cpu, mem := c.Resources.Limits.Cpu().MilliValue(), c.Resources.Limits.Memory().Value(); cpu != 500 || mem != 256<<20 {
		t.Errorf("limits cpu %dm memory %d, want 500m and %d", cpu, mem, 256<<20)
	}
	if cpu, mem := c.Resources.Requests.Cpu(), c.Resources.Requests.Memory(); len(c.Resources.Requests) != 2 || !cpu.IsZero() || !mem.IsZero() {
		t.Errorf("requests %v, want zero: a limit caps and reserves nothing", c.Resources.Requests)
	}
	var ref string
	for _, e := range c.Env {
		if e.Name == PasswordEnv && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if ref != "dep-db-abcdef/password" {
		t.Errorf("%s from %q, want the Secret dep-db-abcdef's key password", PasswordEnv, ref)
	}
	if got := pod.Labels[LabelDependency]; got != p.service().Spec.Selector[LabelDependency] || got == "" {
		t.Errorf("the pod's label %q is not the Service's selector %v", got, p.service().Spec.Selector)
	}
	if none := (&Pod{}).spec("x").Spec.Containers[0].Resources.Limits; len(none) != 0 {
		t.Errorf("no limits in the study, yet %v", none)
	}
	if err := p.redact(fmt.Errorf("refused: %s and %s", p.password, base64.StdEncoding.EncodeToString([]byte(p.password)))); strings.Contains(err.Error(), "Secret123") || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(p.password))) {
		t.Errorf("redact left the password: %v", err)
	}
}

// A name or kind that cannot make a dependency's objects is refused
// before anything is created (the namespace is not touched).
func TestDeployRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind deps.Kind
	}{
		{"Db", deps.Postgres},
		{"db_main", deps.Postgres},
		{strings.Repeat("d", 60), deps.Postgres},
		{"db", "oracle"},
	} {
		if _, err := Deploy(context.Background(), nil, tt.name, tt.kind, "image", study.Limits{}); err == nil || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("Deploy(%q, %s): %v; want an error naming it", tt.name, tt.kind, err)
		}
	}
}

// stateEnv names the state directory of a running cluster that the
// tests use and leave running, as package kube's tests do; without it
// they bring one up and take it down in TestMain.
const stateEnv = "MSBENCH_KUBE_TEST_STATE"

var shared struct {
	once      sync.Once
	c         *cluster.Cluster
	started   bool
	skip, err string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.started {
		if err := shared.c.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "cluster down:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func testCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	shared.once.Do(func() { shared.skip, shared.err = setUp(t) })
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != "" {
		t.Fatal(shared.err)
	}
	return shared.c
}

func setUp(t *testing.T) (skip, fail string) {
	if os.Geteuid() != 0 {
		return "the local cluster needs root; skipped", ""
	}
	var err error
	if dir := os.Getenv(stateEnv); dir != "" {
		if shared.c, err = cluster.Open(dir); err != nil {
			return "", err.Error()
		}
		return "", ""
	}
	if missing := cluster.MissingPackages(); len(missing) > 0 {
		return fmt.Sprintf("the local cluster needs Debian packages %v (make deps)", missing), ""
	}
	dir, err := os.MkdirTemp("", "msbench-deppod-test-")
	if err != nil {
		return "", err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// One cluster runs on a machine at a time: other packages' tests, run
	// beside these by go test ./..., may hold it.
	if shared.c, err = cluster.Up(ctx, cluster.Options{StateDir: dir, Netns: "msbench-deppod", WaitForMachine: 15 * time.Minute}); err != nil {
		return "", "cluster up: " + err.Error()
	}
	shared.started = true
	return "", ""
}

// testNamespace is a namespace of the test's own, deleted at its end.
func testNamespace(ctx context.Context, t *testing.T, c *cluster.Cluster) *kube.Namespace {
	t.Helper()
	ns, err := kube.CreateNamespace(ctx, kube.Target{Kubeconfig: c.Kubeconfig()}, "deppod-test", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// podsOf are the names of the dependency's pods in the namespace.
func podsOf(ctx context.Context, t *testing.T, p *Pod) []string {
	t.Helper()
	list, err := p.ns.Client().CoreV1().Pods(p.ns.Name).List(ctx, metav1.ListOptions{LabelSelector: LabelDependency + "=" + p.base})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pod := range list.Items {
		names = append(names, pod.Name)
	}
	return names
}

// PostgreSQL in a pod of the local cluster, used from the cluster's
// network through its Service's address with the values Deploy gives:
// a row written before an in-place restart is there after it; a pod
// killed and started again is a new, empty one behind the same address
// and password; Stop leaves no pod.
func TestPostgresPod(t *testing.T) {
	c := testCluster(t)
	store := imagetest.Store(t)
	root := filepath.Dir(filepath.Dir(store.Dir))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b, err := Build(ctx, store, root, deps.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	archive, err := b.WriteArchive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	ns := testNamespace(ctx, t, c)
	began := time.Now()
	p, err := Deploy(ctx, ns, "db", deps.Postgres, b.Ref, study.Limits{CPUs: 0.5, MemoryBytes: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("deployed in %v (the agent's start-up %v), pod %s", time.Since(began).Round(time.Millisecond), p.StartupTime.Round(time.Millisecond), p.PodName())
	stopped := false
	defer func() {
		if !stopped {
			p.Stop(ctx)
		}
	}()
	pod, err := ns.Client().CoreV1().Pods(ns.Name).Get(ctx, p.PodName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mem := pod.Spec.Containers[0].Resources.Limits.Memory().Value(); mem != 512<<20 {
		t.Errorf("the pod's memory limit %d, want %d", mem, 512<<20)
	}
	values := p.Values()
	svc, err := ns.Client().CoreV1().Services(ns.Name).Get(ctx, p.base, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := svc.Spec.ClusterIP + ":5432"; values["addr"] != want || !strings.Contains(values["url"], "@"+want+"/") {
		t.Errorf("addr %q, url's host not the Service's %s", values["addr"], want)
	}
	if values["password"] == "" || !strings.Contains(values["url"], values["password"]) || strings.Contains(values["url"], PasswordPlaceholder) {
		t.Error("the url does not hold the real password")
	}
	if s := fmt.Sprintf("%v %+v", p, p); strings.Contains(s, values["password"]) {
		t.Errorf("the pod printed shows the password: %s", s)
	}

	query := func(sql string, args ...any) (n int, err error) {
		cfg, err := pgx.ParseConfig(values["url"])
		if err != nil {
			return 0, err
		}
		cfg.DialFunc = c.DialContext
		qctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		conn, err := pgx.ConnectConfig(qctx, cfg)
		if err != nil {
			return 0, err
		}
		defer conn.Close(context.WithoutCancel(qctx))
		if strings.HasPrefix(sql, "SELECT") {
			err = conn.QueryRow(qctx, sql, args...).Scan(&n)
		} else {
			_, err = conn.Exec(qctx, sql, args...)
		}
		return n, err
	}
	if _, err := query("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	took, err := p.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in place in %v", took.Round(time.Millisecond))
	if took <= 0 {
		t.Errorf("restart took %v", took)
	}
	if n, err := query("SELECT n FROM kept"); err != nil || n != 42 {
		t.Errorf("after the restart: %d, %v; want the row 42", n, err)
	}
	// A second restart waits for its own line, not the first one's.
	if _, err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := query("SELECT n FROM kept"); err != nil || n != 42 {
		t.Errorf("after the second restart: %d, %v; want the row 42", n, err)
	}

	first := p.PodName()
	if err := p.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if names := podsOf(ctx, t, p); len(names) != 0 {
		t.Errorf("pods after Kill: %v", names)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if p.PodName() == first || p.PodName() == "" {
		t.Errorf("the pod after Start is %q (before Kill %q)", p.PodName(), first)
	}
	if !maps.Equal(p.Values(), values) {
		t.Error("the values changed across Kill and Start")
	}
	if _, err := query("SELECT n FROM kept"); err == nil || !strings.Contains(err.Error(), "kept") {
		t.Errorf("the new pod has the old one's table, or cannot be queried: %v", err)
	}

	stopped = true
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if names := podsOf(ctx, t, p); len(names) != 0 {
		t.Errorf("pods after Stop: %v", names)
	}
}

// A pod that cannot start fails Deploy at once, naming why, and is
// deleted.
func TestDeployMissingImage(t *testing.T) {
	c := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, c)
	began := time.Now()
	_, err := Deploy(ctx, ns, "db", deps.Redis, "msbench.local/msbench-no-such-image:0", study.Limits{})
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") {
		t.Fatalf("Deploy of a missing image: %v; want ErrImageNeverPull", err)
	}
	t.Logf("failed in %v: %v", time.Since(began).Round(time.Millisecond), err)
	list, err := ns.Client().CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d pods left", len(list.Items))
	}
}
