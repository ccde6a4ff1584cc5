package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// On data drawn with known parts, the estimates are right on average:
// unbiased for within (a mean square), and for between as long as it is
// not so small that the cut at 0 lifts it. Unbalanced groups too.
func TestComponentsRecoverKnownParts(t *testing.T) {
	for _, c := range []struct {
		name            string
		between, within float64 // standard deviations
		sizes           []int
	}{
		{"deployments dominate", 0.05, 0.01, []int{5, 5, 5, 5, 5}},
		{"slices dominate", 0.03, 0.06, []int{6, 6, 6, 6, 6, 6, 6, 6, 6, 6}},
		{"unbalanced", 0.04, 0.03, []int{5, 2, 5, 4, 5, 5, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(len(c.sizes))))
			const trials = 4000
			var sb, sw float64
			for range trials {
				groups := make([][]float64, len(c.sizes))
				for i, n := range c.sizes {
					luck := c.between * r.NormFloat64()
					for range n {
						groups[i] = append(groups[i], 1+luck+c.within*r.NormFloat64())
					}
				}
				b, w, ok := Components(groups)
				if !ok {
					t.Fatal("not ok")
				}
				sb, sw = sb+b, sw+w
			}
			// Averages of 4,000 estimates: a few percent of sampling error
			// at most; 10% leaves room without hiding a wrong formula (one
			// without n₀ is off by the group size).
			gotB, gotW := sb/trials, sw/trials
			wantB, wantW := c.between*c.between, c.within*c.within
			if math.Abs(gotW/wantW-1) > 0.1 || math.Abs(gotB/wantB-1) > 0.1 {
				t.Errorf("between %.3g within %.3g on average, want %.3g and %.3g", gotB, gotW, wantB, wantW)
			}
		})
	}
}

func TestComponentsNeedTwoGroupsAndARepeat(t *testing.T) {
	for _, groups := range [][][]float64{nil, {{1, 2, 3}}, {{1}, {2}}, {{1}, {}, {2}}} {
		if _, _, ok := Components(groups); ok {
			t.Errorf("Components(%v) ok", groups)
		}
	}
	// Identical groups: nothing between, all within; one below 0 reads 0.
	if b, w, ok := Components([][]float64{{1, 3}, {1, 3}}); !ok || b != 0 || w != 2 {
		t.Errorf("between %v within %v", b, w)
	}
}
