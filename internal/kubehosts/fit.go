package kubehosts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Capacity is a node that can take a run's pods and the CPUs it can
// grant them: its allocatable CPUs (other pods' requests, which a run
// may not list, are not subtracted).
type Capacity struct {
	Node string
	CPUs float64
}

// Capacities lists the nodes that can take a run's pods (as Assign
// chooses them), most allocatable CPU first, then by name.
func Capacities(ctx context.Context, cs kubernetes.Interface) ([]Capacity, error) {
	usable, _, err := nodes(ctx, cs)
	if err != nil {
		return nil, err
	}
	out := make([]Capacity, 0, len(usable))
	for _, n := range usable {
		out = append(out, Capacity{Node: n.Name, CPUs: n.Status.Allocatable.Cpu().AsApproximateFloat64()})
	}
	return out, nil
}

// Pod is a pod's CPU request, and the node it is bound to ("" for any).
type Pod struct {
	Name string
	CPUs float64
	Node string
}

// Fit says whether pods, all running at once, can have their CPUs on
// nodes: nil if a placement exists that first-fit decreasing finds (the
// bound pods on their nodes first, then the others largest first, each
// on the first node with room), else an error naming the first pod left
// without room. A total within the nodes' sum is not enough: a pod's
// CPUs must all be on one node.
func Fit(nodes []Capacity, pods []Pod) error {
	free := map[string]float64{}
	var total float64
	for _, n := range nodes {
		free[n.Node] = n.CPUs
		total += n.CPUs
	}
	var want float64
	for _, p := range pods {
		want += p.CPUs
	}
	order := slices.Clone(pods)
	slices.SortStableFunc(order, func(a, b Pod) int {
		if (a.Node == "") != (b.Node == "") {
			if a.Node != "" {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.CPUs, a.CPUs)
	})
	for _, p := range order {
		if p.Node != "" {
			room, ok := free[p.Node]
			if !ok {
				return fmt.Errorf("%s is bound to node %s, which cannot take pods", p.Name, p.Node)
			}
			if room+1e-9 < p.CPUs {
				return fmt.Errorf("%s's %g CPUs do not fit on its node %s (%g left of %g allocatable) beside the run's other pods there; the run's pods ask %g CPUs in all",
					p.Name, p.CPUs, p.Node, room, allocatable(nodes, p.Node), want)
			}
			free[p.Node] = room - p.CPUs
			continue
		}
		i := slices.IndexFunc(nodes, func(n Capacity) bool { return free[n.Node]+1e-9 >= p.CPUs })
		if i < 0 {
			return fmt.Errorf("%s's %g CPUs fit on no node beside the run's other pods (the run's pods ask %g CPUs in all; the nodes that can take them have %g allocatable: %s)",
				p.Name, p.CPUs, want, total, describe(nodes))
		}
		free[nodes[i].Node] -= p.CPUs
	}
	return nil
}

func allocatable(nodes []Capacity, name string) float64 {
	for _, n := range nodes {
		if n.Node == name {
			return n.CPUs
		}
	}
	return 0
}

func describe(nodes []Capacity) string {
	if len(nodes) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s %g", n.Node, n.CPUs))
	}
	return strings.Join(parts, ", ")
}
