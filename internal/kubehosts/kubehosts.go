// Package kubehosts maps a study's emulated hosts (hosts:) to a
// cluster's nodes. Locally a host is a network namespace of its own; on a
// cluster it is a node of its own: every pod of its services is bound
// there by required node affinity, so that services on different hosts
// talk across the cluster's network as the hosts' services do across
// the bridge here.
//
// Each host needs a node no other host has. A cluster with fewer nodes
// that can take pods than the study has hosts is refused before anything
// starts rather than co-located: co-located hosts would measure one
// machine's loopback where the study asks for a network between machines.
package kubehosts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/study"
)

// Assignment is where a study's hosts run on a cluster.
type Assignment struct {
	// Hosts is host → node.
	Hosts map[string]string
	// Services is service → its host's node: where each service's pods
	// are bound (Affinity).
	Services map[string]string
	// Generators is a node that holds no host, for the generator pods
	// (msbench's side of the bridge locally); "" where every node that
	// can take pods holds one, and the generators go anywhere.
	Generators string
	// Summary says it in a line, for the run's log and provenance:
	// "edge on node-a, functions on node-b; generators on node-c".
	Summary string
}

// Assign gives each host a node of its own among those that can take
// pods: Ready, not cordoned, without a NoSchedule or NoExecute taint (a
// run's pods tolerate none). The nodes are taken in a fixed order, most
// allocatable CPU first, then by name, so that the same cluster gives the
// same assignment; the hosts take them in the study's order and the
// generators the next one. With fewer such nodes than hosts it refuses,
// naming the hosts, the nodes it found and why the others could not be
// used. Without hosts it returns an empty Assignment and asks the
// cluster nothing.
func Assign(ctx context.Context, cs kubernetes.Interface, hosts []*study.Host) (Assignment, error) {
	if len(hosts) == 0 {
		return Assignment{}, nil
	}
	usable, skipped, err := nodes(ctx, cs)
	if err != nil {
		return Assignment{}, fmt.Errorf("hosts: %w", err)
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	if len(usable) < len(hosts) {
		return Assignment{}, fmt.Errorf("hosts: the study's %d hosts (%s) each need a node of their own, and the cluster has %d that can take pods (%s)%s; hosts are not put together on one node, which would measure its loopback: run on a cluster with at least %d such nodes, or on this machine",
			len(hosts), strings.Join(names, ", "), len(usable), nodeNames(usable), skippedText(skipped), len(hosts))
	}
	a := Assignment{Hosts: map[string]string{}, Services: map[string]string{}}
	var placed []string
	for i, h := range hosts {
		node := usable[i].Name
		a.Hosts[h.Name] = node
		for _, svc := range h.Services {
			a.Services[svc] = node
		}
		placed = append(placed, h.Name+" on "+node)
	}
	gen := "generators on any node (every node that can take pods holds a host)"
	if len(usable) > len(hosts) {
		a.Generators = usable[len(hosts)].Name
		gen = "generators on " + a.Generators
	}
	a.Summary = fmt.Sprintf("%s; %s%s", strings.Join(placed, ", "), gen, skippedText(skipped))
	return a, nil
}

// nodes lists the nodes a run's pods can be bound to, most allocatable
// CPU first, then by name, and the others as "node (why)", by name.
func nodes(ctx context.Context, cs kubernetes.Interface) (usable []corev1.Node, skipped []string, err error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("the cluster's nodes: %w", err)
	}
	for _, n := range list.Items {
		if why := unusable(n); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", n.Name, why))
			continue
		}
		usable = append(usable, n)
	}
	slices.SortFunc(usable, func(a, b corev1.Node) int {
		if c := b.Status.Allocatable.Cpu().Cmp(*a.Status.Allocatable.Cpu()); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	slices.Sort(skipped)
	return usable, skipped, nil
}

// unusable says why a run's pods cannot be bound to a node; "" when they
// can.
func unusable(n corev1.Node) string {
	var why []string
	if n.Spec.Unschedulable {
		why = append(why, "cordoned")
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		why = append(why, "not Ready")
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			why = append(why, "taint "+t.ToString())
		}
	}
	return strings.Join(why, ", ")
}

func nodeNames(nodes []corev1.Node) string {
	if len(nodes) == 0 {
		return "none"
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

func skippedText(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return "; not used: " + strings.Join(skipped, ", ")
}

// Affinity binds a pod to node: required node affinity on the node's
// name (metadata.name, as the DaemonSet controller binds its pods), not
// its kubernetes.io/hostname label, which may differ from the name on
// some clouds. nil for node "": no binding, so a caller can pass what a
// map of nodes gives for any pod.
func Affinity(node string) *corev1.Affinity {
	if node == "" {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{
					Key:      metav1.ObjectNameField,
					Operator: corev1.NodeSelectorOpIn,
					Values:   []string{node},
				}},
			}},
		},
	}}
}
