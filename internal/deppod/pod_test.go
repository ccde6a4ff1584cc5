package deppod

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	amqp "github.com/rabbitmq/amqp091-go"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
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

// The route check a pod runs through its Service passes once a connection
// opens (here to a listener on loopback) and fails on a refusal after its
// bound; the failing case runs 600 times 0.1 s, too long here, so only its
// message is checked.
func TestRouteCheck(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host, port, _ := net.SplitHostPort(l.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "/bin/bash", "-c", routeCheck(host, port)).CombinedOutput(); err != nil {
		t.Errorf("route check to a listener: %v: %s", err, out)
	}
	if script := routeCheck("10.96.0.1", "5432"); !strings.Contains(script, "/dev/tcp/10.96.0.1/5432") || !strings.Contains(script, "exit 1") {
		t.Errorf("route check %q", script)
	}
}

// The cluster tests run on clustertest's cluster.
var shared = clustertest.Shared{Netns: "msbench-deppod"}

func TestMain(m *testing.M) { shared.Main(m) }

func testCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs the local cluster (one is brought up when none is named)")
	}
	return shared.Get(t)
}

// testNamespace is a namespace of the test's own, deleted at its end,
// created and used with kube.RequiredRules alone: Deploy and its faults
// need no other right.
func testNamespace(ctx context.Context, t *testing.T, c *cluster.Cluster) *kube.Namespace {
	t.Helper()
	ns, err := kube.CreateNamespace(ctx, restricted(ctx, t, c), "deppod-test", "")
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

// restricted is the cluster's admin kubeconfig impersonating a service
// account that a ClusterRoleBinding gives kube.ClusterRole alone; the
// three are removed at the test's end.
func restricted(ctx context.Context, t *testing.T, c *cluster.Cluster) kube.Target {
	t.Helper()
	admin, err := kube.Target{Kubeconfig: c.Kubeconfig()}.Client(0)
	if err != nil {
		t.Fatal(err)
	}
	name := "msbench-deppod-test-" + strings.ToLower(rand.Text()[:6])
	const home = "default"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: home}},
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, err := range []error{
			admin.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}),
			admin.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}),
			admin.CoreV1().ServiceAccounts(home).Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
	})
	if _, err := admin.CoreV1().ServiceAccounts(home).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, kube.ClusterRole(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range cfg.AuthInfos {
		user.Impersonate = "system:serviceaccount:" + home + ":" + name
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	target := kube.Target{Kubeconfig: path}
	cs, err := target.Client(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := clustertest.AwaitAllowed(ctx, cs, "create", "namespaces"); err != nil {
		t.Fatal(err)
	}
	return target
}

// imported imports b into the cluster's containerd, and returns a
// namespace of the test's own.
func imported(ctx context.Context, t *testing.T, c *cluster.Cluster, b studyimage.Built) *kube.Namespace {
	t.Helper()
	archive, err := b.WriteArchive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	return testNamespace(ctx, t, c)
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

// dialFunc dials from where the dependency's clients are.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// keeper writes something durable into a dependency, and says whether it
// is there.
type keeper struct {
	write func(ctx context.Context, values map[string]string, dial dialFunc) error
	kept  func(ctx context.Context, values map[string]string, dial dialFunc) (bool, error)
}

var keepers = map[deps.Kind]keeper{
	deps.Postgres: {
		write: func(ctx context.Context, v map[string]string, dial dialFunc) error {
			return pgQuery(ctx, v, dial, func(conn *pgx.Conn) error {
				_, err := conn.Exec(ctx, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
				return err
			})
		},
		kept: func(ctx context.Context, v map[string]string, dial dialFunc) (found bool, err error) {
			err = pgQuery(ctx, v, dial, func(conn *pgx.Conn) error {
				var n int
				err := conn.QueryRow(ctx, "SELECT n FROM kept").Scan(&n)
				if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
					return nil
				}
				if err == nil && n != 42 {
					err = fmt.Errorf("kept holds %d, not 42", n)
				}
				found = err == nil
				return err
			})
			return found, err
		},
	},
	deps.RabbitMQ: {
		write: func(ctx context.Context, v map[string]string, dial dialFunc) error {
			return amqpChannel(ctx, v, dial, func(ch *amqp.Channel) error {
				if _, err := ch.QueueDeclare("kept", true, false, false, false, nil); err != nil {
					return err
				}
				return ch.PublishWithContext(ctx, "", "kept", false, false, amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte("42")})
			})
		},
		kept: func(ctx context.Context, v map[string]string, dial dialFunc) (found bool, err error) {
			err = amqpChannel(ctx, v, dial, func(ch *amqp.Channel) error {
				_, err := ch.QueueDeclarePassive("kept", true, false, false, false, nil)
				if amqpErr := (*amqp.Error)(nil); errors.As(err, &amqpErr) && amqpErr.Code == amqp.NotFound {
					return nil
				}
				if err != nil {
					return err
				}
				// Not acknowledged: the channel's closing puts it back.
				msg, ok, err := ch.Get("kept", false)
				if err == nil && (!ok || string(msg.Body) != "42") {
					err = fmt.Errorf("queue kept holds %q (a message: %v), not 42", msg.Body, ok)
				}
				found = err == nil
				return err
			})
			return found, err
		},
	},
}

func pgQuery(ctx context.Context, v map[string]string, dial dialFunc, use func(*pgx.Conn) error) error {
	cfg, err := pgx.ParseConfig(v["url"])
	if err != nil {
		return err
	}
	cfg.DialFunc = pgconn.DialFunc(dial)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return use(conn)
}

func amqpChannel(ctx context.Context, v map[string]string, dial dialFunc, use func(*amqp.Channel) error) error {
	conn, err := amqp.DialConfig(v["url"], amqp.Config{Dial: func(network, addr string) (net.Conn, error) { return dial(ctx, network, addr) }})
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	return use(ch)
}

// A dependency in a pod of the local cluster, used from the cluster's
// network through its Service's address with the values Deploy gives:
// what it holds before an in-place restart is there after it (twice); a
// pod killed and started again is a new, empty one behind the same values;
// Stop leaves no pod. PostgreSQL's always, RabbitMQ's (the ipc study's
// broker) with MSBENCH_ALL_DEPENDENCY_IMAGES=1, as TestDependenciesRunInTheirImages.
func TestDependencyPods(t *testing.T) {
	all := os.Getenv("MSBENCH_ALL_DEPENDENCY_IMAGES") != ""
	for _, kind := range []deps.Kind{deps.Postgres, deps.RabbitMQ} {
		t.Run(string(kind), func(t *testing.T) {
			if !all && kind != deps.Postgres {
				t.Skip("one image in make test; MSBENCH_ALL_DEPENDENCY_IMAGES=1 runs RabbitMQ's too")
			}
			testDependencyPod(t, kind, keepers[kind])
		})
	}
}

func testDependencyPod(t *testing.T, kind deps.Kind, use keeper) {
	store := imagetest.Store(t)
	c := testCluster(t)
	root := filepath.Dir(filepath.Dir(store.Dir))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b, err := Build(ctx, store, root, kind)
	if err != nil {
		t.Fatal(err)
	}
	ns := imported(ctx, t, c, b)
	began := time.Now()
	p, err := Deploy(ctx, ns, "dep", kind, b.Ref, study.Limits{CPUs: 0.5, MemoryBytes: 512 << 20})
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
	want := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(ports[kind]))
	if values["addr"] != want || !strings.Contains(values["url"], "@"+want+"/") {
		t.Errorf("addr %q, url's host not the Service's %s", values["addr"], want)
	}
	if values["password"] == "" || !strings.Contains(values["url"], values["password"]) || strings.Contains(values["url"], PasswordPlaceholder) {
		t.Error("the url does not hold the real password")
	}
	if s := fmt.Sprintf("%v %+v", p, p); strings.Contains(s, values["password"]) {
		t.Errorf("the pod printed shows the password: %s", s)
	}

	if err := use.write(ctx, values, c.DialContext); err != nil {
		t.Fatal(err)
	}
	// A second restart waits for its own line, not the first one's.
	for i := range 2 {
		took, err := p.Restart(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("restarted in place in %v", took.Round(time.Millisecond))
		if took <= 0 {
			t.Errorf("restart took %v", took)
		}
		if kept, err := use.kept(ctx, values, c.DialContext); err != nil || !kept {
			t.Errorf("after restart %d: kept %v, %v", i+1, kept, err)
		}
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
	if kept, err := use.kept(ctx, values, c.DialContext); err != nil || kept {
		t.Errorf("the new pod: kept %v, %v; want it empty and usable", kept, err)
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
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") || strings.Contains(err.Error(), "exited") {
		t.Fatalf("Deploy of a missing image: %v; want ErrImageNeverPull alone (its container never ran)", err)
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
