package kubehosts

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestFit(t *testing.T) {
	two := []Capacity{{"a", 2}, {"b", 2}}
	for _, tc := range []struct {
		name  string
		nodes []Capacity
		pods  []Pod
		want  string // in the error; "" for nil
	}{
		{"nothing", two, nil, ""},
		{"exactly full", two, []Pod{{"g", 1, ""}, {"s1", 1, ""}, {"s2", 2, ""}}, ""},
		// Four CPUs in all are asked and there are four, but no node
		// has room for the last pod's whole CPU.
		{"total fits, nodes do not", two, []Pod{{"x", 1.5, ""}, {"y", 1.5, ""}, {"z", 1, ""}}, "z's 1 CPUs fit on no node"},
		{"one more than the nodes", two, []Pod{{"x", 2, ""}, {"y", 2, ""}, {"z", 0.5, ""}}, "ask 4.5 CPUs in all"},
		// Bound pods take their node first, so a free pod placed first
		// cannot take the room a bound one needs.
		{"bound first", two, []Pod{{"free", 2, ""}, {"edge", 2, "a"}}, ""},
		{"bound pods overfill their node", two, []Pod{{"gw", 1.5, "a"}, {"gw2", 1, "a"}}, "gw2's 1 CPUs do not fit on its node a (0.5 left of 2 allocatable)"},
		{"bound to a node that takes no pods", two, []Pod{{"gw", 1, "c"}}, "bound to node c, which cannot take pods"},
		{"no nodes", nil, []Pod{{"g", 0.5, ""}}, "have 0 allocatable: none"},
		{"fractions", []Capacity{{"a", 1.9}}, []Pod{{"p", 0.1, ""}, {"q", 1.8, ""}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Fit(tc.nodes, tc.pods)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("does not fit: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("fits; want an error saying %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// Only the nodes that can take pods count, in Assign's order.
func TestCapacities(t *testing.T) {
	cs := clientset(node("small", "2"), node("big", "8"), node("off", "16", cordoned), node("also-big", "8"), node("down", "4", notReady))
	got, err := Capacities(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Capacity{{"also-big", 8}, {"big", 8}, {"small", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
