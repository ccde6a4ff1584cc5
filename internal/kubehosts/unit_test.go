package kubehosts

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/msbench/msbench/internal/study"
)

// node is a Ready, schedulable node with cpu allocatable; change alters
// it further.
func node(name, cpu string, change ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, c := range change {
		c(n)
	}
	return n
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func tainted(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "db", Effect: effect})
	}
}

// twoHosts is faas-gateway's hosts: the gateway on one, the RPC server
// on the other.
func twoHosts() []*study.Host {
	return []*study.Host{{Name: "edge", Services: []string{"gateway"}}, {Name: "functions", Services: []string{"rpc", "cache"}}}
}

func clientset(nodes ...*corev1.Node) *fake.Clientset {
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	return fake.NewSimpleClientset(objs...)
}

func TestAssign(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nodes     []*corev1.Node
		want      Assignment // Summary compared with summary
		summary   []string   // in the Summary, in this order
		refused   []string   // in the error; nil: accepted
		unrefused []string   // not in the error
	}{
		{
			name:  "two hosts on three nodes, most CPU first, generators on the third",
			nodes: []*corev1.Node{node("a", "2"), node("b", "4"), node("c", "8")},
			want: Assignment{
				Hosts:      map[string]string{"edge": "c", "functions": "b"},
				Services:   map[string]string{"gateway": "c", "rpc": "b", "cache": "b"},
				Generators: "a",
			},
			summary: []string{"edge on c", "functions on b", "generators on a"},
		},
		{
			name:  "equal CPUs go by name",
			nodes: []*corev1.Node{node("n3", "2"), node("n1", "2"), node("n2", "2")},
			want: Assignment{
				Hosts:      map[string]string{"edge": "n1", "functions": "n2"},
				Services:   map[string]string{"gateway": "n1", "rpc": "n2", "cache": "n2"},
				Generators: "n3",
			},
		},
		{
			name:  "as many nodes as hosts: the generators anywhere",
			nodes: []*corev1.Node{node("a", "2"), node("b", "2")},
			want: Assignment{
				Hosts:    map[string]string{"edge": "a", "functions": "b"},
				Services: map[string]string{"gateway": "a", "rpc": "b", "cache": "b"},
			},
			summary: []string{"generators on any node"},
		},
		{
			name: "unusable nodes skipped and said why; a PreferNoSchedule taint is no bar",
			nodes: []*corev1.Node{
				node("big-cordoned", "64", cordoned), node("big-down", "64", notReady),
				node("big-tainted", "64", tainted(corev1.TaintEffectNoExecute)),
				node("x", "2", tainted(corev1.TaintEffectPreferNoSchedule)), node("y", "2"),
			},
			want: Assignment{
				Hosts:    map[string]string{"edge": "x", "functions": "y"},
				Services: map[string]string{"gateway": "x", "rpc": "y", "cache": "y"},
			},
			summary: []string{"edge on x", "functions on y", "not used: big-cordoned (cordoned), big-down (not Ready), big-tainted (taint dedicated=db:NoExecute)"},
		},
		{
			name:      "one node for two hosts: refused",
			nodes:     []*corev1.Node{node("msbench-node", "2")},
			refused:   []string{"2 hosts (edge, functions)", "has 1 that can take pods (msbench-node)", "at least 2"},
			unrefused: []string{"not used"},
		},
		{
			name: "nodes enough but unusable: refused, saying why",
			nodes: []*corev1.Node{
				node("ok", "2"), node("cordoned", "2", cordoned, tainted(corev1.TaintEffectNoSchedule)),
				node("down", "2", func(n *corev1.Node) { n.Status.Conditions = nil }),
			},
			refused: []string{"edge, functions", "(ok)", "cordoned (cordoned, taint dedicated=db:NoSchedule)", "down (not Ready)"},
		},
		{
			name:    "no node at all",
			refused: []string{"has 0 that can take pods (none)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(context.Background(), clientset(tc.nodes...), twoHosts())
			if tc.refused != nil {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				for _, s := range tc.refused {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not say %q: %v", s, err)
					}
				}
				for _, s := range tc.unrefused {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error says %q: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			summary := got.Summary
			got.Summary = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			rest := summary
			for _, s := range tc.summary {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("summary %q lacks %q (or not in order)", summary, s)
				}
				rest = rest[i+len(s):]
			}
		})
	}
}

// TestAssignIsDeterministic: the order the API lists nodes in does not
// change the assignment.
func TestAssignIsDeterministic(t *testing.T) {
	nodes := []*corev1.Node{node("d", "2"), node("c", "4"), node("b", "2"), node("a", "4"), node("e", "2", cordoned), node("f", "8", notReady)}
	first, err := Assign(context.Background(), clientset(nodes...), twoHosts())
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]int{{5, 4, 3, 2, 1, 0}, {2, 0, 5, 4, 1, 3}, {1, 3, 0, 4, 2, 5}} {
		var shuffled []*corev1.Node
		for _, i := range order {
			shuffled = append(shuffled, nodes[i])
		}
		// The fake may sort what it lists: answer in the shuffled order.
		cs := clientset(shuffled...)
		cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			list := &corev1.NodeList{}
			for _, n := range shuffled {
				list.Items = append(list.Items, *n)
			}
			return true, list, nil
		})
		got, err := Assign(context.Background(), cs, twoHosts())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, first) {
			t.Errorf("order %v: got %+v, want %+v", order, got, first)
		}
	}
	if first.Hosts["edge"] != "a" || first.Hosts["functions"] != "c" || first.Generators != "b" {
		t.Errorf("not most CPU first, then by name: %+v", first)
	}
}

func TestAssignWithoutHostsAsksNothing(t *testing.T) {
	cs := clientset(node("a", "2"))
	got, err := Assign(context.Background(), cs, nil)
	if err != nil || !reflect.DeepEqual(got, Assignment{}) {
		t.Fatalf("got %+v, %v; want an empty assignment", got, err)
	}
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("%d calls to the API: %v", n, cs.Actions())
	}
}

func TestAssignSaysWhyTheNodesAreUnknown(t *testing.T) {
	cs := clientset()
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`nodes is forbidden: User "u" cannot list resource "nodes"`)
	})
	_, err := Assign(context.Background(), cs, twoHosts())
	if err == nil || !strings.Contains(err.Error(), "hosts: the cluster's nodes") || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("got %v", err)
	}
}

func TestAffinity(t *testing.T) {
	if a := Affinity(""); a != nil {
		t.Errorf("Affinity(\"\") = %+v, want nil", a)
	}
	terms := Affinity("n1").NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	want := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}
	if !reflect.DeepEqual(terms, want) {
		t.Errorf("got %+v, want %+v", terms, want)
	}
}
