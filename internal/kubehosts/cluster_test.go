package kubehosts

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
)

// The integration test runs on a real cluster (clustertest).
var shared = clustertest.Shared{Netns: "msbench-kube-kh"}

func TestMain(m *testing.M) { shared.Main(m) }

// TestHostsOnTheLocalCluster: on the single-node cluster one host gets
// the node, and the scheduler honours Affinity: a pod bound to it is
// scheduled there, one bound to a node that does not exist is not
// scheduled at all; two hosts are refused.
func TestHostsOnTheLocalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: schedules pods on the local cluster")
	}
	c := shared.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	target := kube.Target{Kubeconfig: c.Kubeconfig()}
	cs, err := target.Client(0)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("the local cluster has %d nodes, want 1", len(nodes.Items))
	}
	node := nodes.Items[0].Name

	a, err := Assign(ctx, cs, []*study.Host{{Name: "edge", Services: []string{"gateway"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hosts["edge"] != node || a.Services["gateway"] != node || a.Generators != "" {
		t.Fatalf("got %+v, want edge and gateway on %s, the generators anywhere", a, node)
	}
	t.Log(a.Summary)

	_, err = Assign(ctx, cs, twoHosts())
	if err == nil {
		t.Fatal("two hosts on one node accepted")
	}
	for _, s := range []string{"edge", "functions", node} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal does not name %s: %v", s, err)
		}
	}

	ns, err := kube.CreateNamespace(ctx, target, "kubehosts-test", "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ns.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	pods := cs.CoreV1().Pods(ns.Name)
	for name, on := range map[string]string{"bound": node, "nowhere": "no-such-node"} {
		if _, err := pods.Create(ctx, pinned(name, on), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	scheduled := await(ctx, t, cs, ns.Name, "bound", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if scheduled.Spec.NodeName != node {
		t.Errorf("pod bound to %s scheduled on %s", node, scheduled.Spec.NodeName)
	}
	pending := await(ctx, t, cs, ns.Name, "nowhere", func(p *corev1.Pod) bool {
		return p.Spec.NodeName != "" || condition(p, corev1.PodScheduled) != nil
	})
	cond := condition(pending, corev1.PodScheduled)
	if pending.Spec.NodeName != "" || cond.Status != corev1.ConditionFalse || cond.Reason != corev1.PodReasonUnschedulable {
		t.Errorf("pod bound to a node that does not exist: on %q, %+v; want unschedulable", pending.Spec.NodeName, cond)
	}
}

// pinned is a pod bound to node by Affinity. Only its scheduling is
// tested: its image is not on the node and is never pulled (nothing
// leaves the machine), so the bound pod waits in ErrImageNeverPull.
func pinned(name, node string) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Affinity:                     Affinity(node),
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "c", Image: "msbench.local/kubehosts-absent:0", ImagePullPolicy: corev1.PullNever}},
		},
	}
}

// await polls pod name until done holds, for at most a minute: the
// scheduler takes it up within a second on an idle cluster, more on a
// busy machine.
func await(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if done(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s after a minute: on %q, %+v", name, p.Spec.NodeName, p.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
