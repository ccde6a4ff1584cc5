package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/msbench/msbench/internal/proc/procfs"
)

func TestGeneratedNamesAreNamespaceNames(t *testing.T) {
	for _, run := range []string{"", "20261126T090000-faas-gateway", "Run_With.Odd/Chars ünïcode", strings.Repeat("x", 100), "---"} {
		name, err := generatedName(run)
		if err != nil {
			t.Fatal(err)
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 || !strings.HasPrefix(name, "msbench") {
			t.Errorf("run %q: name %q: %v", run, name, errs)
		}
		if other, _ := generatedName(run); other == name {
			t.Errorf("run %q: two namespaces named %q", run, name)
		}
	}
}

func TestLabelValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"20261126T090000-faas", "20261126T090000-faas"},
		{"host.example.org", "host.example.org"},
		{"-a b/c-", "a-b-c"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
		{"a" + strings.Repeat("-", 70), "a"},
	} {
		got := labelValue(tc.in)
		if got != tc.want {
			t.Errorf("labelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q: %v", tc.in, got, errs)
		}
	}
}

// useLeaseDir points the package's leases at a directory of the test's.
func useLeaseDir(t *testing.T) string {
	t.Helper()
	old := leaseDir
	leaseDir = t.TempDir()
	t.Cleanup(func() { leaseDir = old })
	return leaseDir
}

// TestSweepWithoutACluster: a dead holder's lease whose cluster is gone
// (its kubeconfig removed, as cluster down does) is dropped; a live
// holder's lease is left for it; an unreadable one is reported and kept.
func TestSweepWithoutACluster(t *testing.T) {
	dir := useLeaseDir(t)
	gone := Target{Kubeconfig: filepath.Join(dir, "gone.yaml")}
	dead := newLease(gone, "msbench-gone", "r1")
	dead.PID, dead.Start = 1<<22+1, 1 // beyond pid_max: never alive
	live := newLease(gone, "msbench-mine", "r2")
	parent, err := procfs.ReadStat(os.Getppid()) // the go tool: alive, and not this process
	if err != nil {
		t.Fatal(err)
	}
	live.PID, live.Start = parent.PID, parent.StartTime
	for _, l := range []lease{dead, live} {
		if err := l.write(dir); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, leasePrefix+"9-x.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sweep(context.Background(), dir)
	if len(s.Gone) != 1 || !strings.Contains(s.Gone[0], "msbench-gone") || len(s.Deleted) != 0 || len(s.Left) != 1 || !strings.Contains(s.Left[0].Error(), "not one msbench wrote") {
		t.Errorf("swept %v", s)
	}
	if quiet := (Swept{Gone: s.Gone, Runs: s.Runs}); !quiet.Empty() {
		t.Errorf("a sweep that found only namespaces already gone has something to say: %s", quiet)
	}
	for file, want := range map[string]bool{dead.path(dir): false, live.path(dir): true, bad: true} {
		if _, err := os.Stat(file); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", file, err == nil, want)
		}
	}
}

// fakeAPI is an API server on 127.0.0.1 that keeps the secrets it is
// sent, except one named "refused", which it refuses with the object in
// its message, as an admission webhook might.
func fakeAPI(t *testing.T) (*Namespace, map[string]*corev1.Secret) {
	t.Helper()
	stored := map[string]*corev1.Secret{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s corev1.Secret
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/msbench-t/secrets" || json.NewDecoder(r.Body).Decode(&s) != nil {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if s.Name == "refused" {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("denied by webhook: data %s, encoded %v", s.Data, base64.StdEncoding.EncodeToString(s.Data["password"]))})
			return
		}
		stored[s.Name] = &s
		json.NewEncoder(w).Encode(&s)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &Namespace{Name: "msbench-t", client: cs}, stored
}

func TestSecretsNeverShowTheirValues(t *testing.T) {
	n, stored := fakeAPI(t)
	s, err := n.CreateSecret(context.Background(), "db", "password", "token")
	if err != nil {
		t.Fatal(err)
	}
	password, err := s.Value("password")
	if err != nil || len(password) != 32 {
		t.Fatalf("value %d characters, %v", len(password), err)
	}
	if got := stored["db"]; got == nil || string(got.Data["password"]) != password {
		t.Fatal("the Secret does not hold the value")
	}
	if token, _ := s.Value("token"); token == password {
		t.Error("two keys share a value")
	}
	js, _ := json.Marshal(s)
	shown := []string{s.String(), fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s), fmt.Sprintf("%+v %#v", *s, *s), string(js)}
	if _, err := s.Value("nope"); err != nil {
		shown = append(shown, err.Error())
	}
	for _, text := range shown {
		if strings.Contains(text, password) || !strings.Contains(text, "db") {
			t.Errorf("shows the value or not the name: %s", text)
		}
	}
	env := s.Env("PGPASSWORD", "password")
	if ref := env.ValueFrom.SecretKeyRef; env.Value != "" || ref.Name != "db" || ref.Key != "password" {
		t.Errorf("env %+v", env)
	}

	_, err = n.CreateSecret(context.Background(), "refused", "password")
	if err == nil {
		t.Fatal("a refused secret was created")
	}
	// The API's message held the value twice, plain and in base64: both
	// are withheld, and the rest of the message stays.
	if msg := err.Error(); strings.Count(msg, "[withheld]") != 2 || !strings.Contains(msg, "denied by webhook") {
		t.Errorf("error %q", msg)
	}
}

func TestClusterRoleManifestIsTheRole(t *testing.T) {
	var back rbacv1.ClusterRole
	if err := json.Unmarshal([]byte(ClusterRoleManifest("msbench")), &back); err != nil {
		t.Fatal(err)
	}
	if want := ClusterRole("msbench"); !reflect.DeepEqual(&back, want) {
		t.Errorf("manifest reads back as %+v, want %+v", back, want)
	}
	for _, r := range RequiredRules() {
		for _, res := range r.Resources {
			if res == "secrets" && !slices.Equal(r.Verbs, []string{"create", "delete"}) {
				t.Errorf("msbench may read secrets: %v", r.Verbs)
			}
			for _, v := range r.Verbs {
				if v == "*" || res == "*" {
					t.Errorf("a wildcard in %+v", r)
				}
				// The namespace's contents go with it; faults delete pods,
				// and a deployment's end its ReplicaSets, Services and
				// Secret (the next deployment of the run shares the
				// namespace).
				if v == "delete" && !slices.Contains([]string{"namespaces", "pods", "replicasets", "services", "secrets"}, res) {
					t.Errorf("msbench may delete %s", res)
				}
			}
		}
	}
}

func TestDescribeNode(t *testing.T) {
	node := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelInstanceTypeStable: "Standard_DS2_v2", corev1.LabelTopologyZone: "westeurope-1"}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("7Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1900m"), corev1.ResourceMemory: resource.MustParse("5Gi")},
			NodeInfo:    corev1.NodeSystemInfo{ContainerRuntimeVersion: "containerd://1.6.20", KubeletVersion: "v1.30.14", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0", Architecture: "amd64"},
		},
	}
	got := describeNode(node)
	want := Node{
		Name: "n1", CPUs: 2, AllocatableCPUs: 1.9, MemoryBytes: 7 << 30, AllocatableMemoryBytes: 5 << 30,
		ContainerRuntime: "containerd://1.6.20", Kubelet: "v1.30.14", OSImage: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.1.0", Architecture: "amd64",
		InstanceType: "Standard_DS2_v2", Zone: "westeurope-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestTrackAddsUpAWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type sample struct {
		start      time.Time
		at         int
		value, mem uint64
	}
	for _, tc := range []struct {
		name     string
		samples  []sample
		cpu      uint64
		peak     uint64
		restarts int
	}{
		{"running before the window: only its growth counts", []sample{{at(-100), 0, 5e9, 10}, {at(-100), 10, 7e9, 30}, {at(-100), 20, 8e9, 20}}, 3e9, 30, 0},
		{"started in the window: all of it counts", []sample{{at(5), 10, 1e9, 10}, {at(5), 20, 4e9, 10}}, 4e9, 10, 0},
		{"restarted: both runs count", []sample{{at(-100), 0, 5e9, 10}, {at(-100), 10, 6e9, 10}, {at(12), 20, 2e9, 50}}, 3e9, 50, 1},
		{"counter reset with the same start", []sample{{at(-100), 0, 5e9, 10}, {at(-100), 10, 6e9, 10}, {at(-100), 20, 1e9, 5}}, 2e9, 10, 1},
	} {
		var tr track
		for _, s := range tc.samples {
			tr.observe(s.start, t0, at(s.at), s.value, s.mem)
		}
		if got := tr.cpuSeconds(); got != float64(tc.cpu)/1e9 || tr.peak != tc.peak || tr.restarts != tc.restarts || tr.samples != len(tc.samples) {
			t.Errorf("%s: cpu %v s, peak %d, restarts %d, samples %d; want %v s, %d, %d", tc.name, got, tr.peak, tr.restarts, tr.samples, float64(tc.cpu)/1e9, tc.peak, tc.restarts)
		}
		if !tr.from.Equal(at(tc.samples[0].at)) || !tr.to.Equal(at(tc.samples[len(tc.samples)-1].at)) {
			t.Errorf("%s: window %v to %v", tc.name, tr.from, tr.to)
		}
	}
}

// TestCreateKeepsTheLeaseUnlessTheNamespaceIsAnothers: a namespace that
// exists is not msbench's, so its lease goes; a create that failed
// otherwise (a timeout, a 500) may have created it, so the lease stays for
// the sweep.
func TestCreateKeepsTheLeaseUnlessTheNamespaceIsAnothers(t *testing.T) {
	for _, tc := range []struct {
		status int
		reason metav1.StatusReason
		lease  bool
	}{
		{http.StatusConflict, metav1.StatusReasonAlreadyExists, false},
		{http.StatusInternalServerError, metav1.StatusReasonInternalError, true},
		{http.StatusGatewayTimeout, metav1.StatusReasonTimeout, true},
	} {
		dir := useLeaseDir(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(tc.status), Reason: tc.reason,
				Details: &metav1.StatusDetails{Name: "msbench-x", Kind: "namespaces"}})
		}))
		kubeconfig := filepath.Join(dir, "kubeconfig.yaml")
		kc := clientcmdapi.NewConfig()
		kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL}
		kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
		kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
		kc.CurrentContext = "c"
		if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
			t.Fatal(err)
		}
		_, err := CreateNamespace(context.Background(), Target{Kubeconfig: kubeconfig}, "r", "msbench-x")
		srv.Close()
		leases, _ := filepath.Glob(filepath.Join(dir, leasePrefix+"*.json"))
		if err == nil || (len(leases) == 1) != tc.lease {
			t.Errorf("HTTP %d: error %v, leases %v, want a lease: %v", tc.status, err, leases, tc.lease)
		}
		if tc.status == http.StatusConflict && !strings.Contains(fmt.Sprint(err), "msbench runs only in a namespace it creates") {
			t.Errorf("HTTP %d: %v", tc.status, err)
		}
	}
}
