package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMannWhitneyKnownValues(t *testing.T) {
	cases := []struct {
		name    string
		a, b    []float64
		u, minU float64
		p       float64
	}{
		// Wikipedia's tortoise-and-hare race: finishing order THHHHHTTTTTH,
		// tortoise rank sum 46, so U_T = 46 − 21 = 25 and the textbook U = 11.
		{"tortoise and hare", []float64{1, 7, 8, 9, 10, 11}, []float64{2, 3, 4, 5, 6, 12}, 25, 11, 0.29795},
		// SciPy's mannwhitneyu example (males vs females): U1 = 17, and
		// method="asymptotic" gives p = 0.11134688653314041.
		{"scipy males/females", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 3, 0.111346886533},
		// Complete separation, n = 10 each: z = (50 − 0.5)/√(100·21/12).
		{"separated", seq(1, 10), seq(11, 20), 0, 0, 1.8267e-4},
		// Ties by hand: ranks 1 | 3 3 3 | 6 6 6 | 8; R_a = 1+3+3+6 = 13,
		// U_a = 3; tie term 2·(27−3) = 48; var = 16/12·(9 − 48/56).
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 3, 4}, 3, 3, 0.172034},
	}
	for _, c := range cases {
		u, p := MannWhitney(c.a, c.b)
		na, nb := float64(len(c.a)), float64(len(c.b))
		if u != c.u || math.Min(u, na*nb-u) != c.minU {
			t.Errorf("%s: U = %v (min %v), want %v (min %v)", c.name, u, math.Min(u, na*nb-u), c.u, c.minU)
		}
		if !near(p, c.p, 1e-4*math.Max(1, c.p*10)) {
			t.Errorf("%s: p = %.6g, want %.6g", c.name, p, c.p)
		}
		// Swapping the samples mirrors U and keeps p.
		u2, p2 := MannWhitney(c.b, c.a)
		if u2 != na*nb-u || !near(p2, p, 1e-12) {
			t.Errorf("%s: swapped gives U=%v p=%v", c.name, u2, p2)
		}
	}
}

// U must equal the pair count with ties as one half, whatever the data.
func TestMannWhitneyUIsPairCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		a, b := make([]float64, 1+r.IntN(15)), make([]float64, 1+r.IntN(15))
		for i := range a {
			a[i] = float64(r.IntN(6))
		}
		for i := range b {
			b[i] = float64(r.IntN(6))
		}
		var pairs float64
		for _, x := range a {
			for _, y := range b {
				switch {
				case x > y:
					pairs++
				case x == y:
					pairs += 0.5
				}
			}
		}
		if u, p := MannWhitney(a, b); u != pairs || !(p >= 0 && p <= 1) {
			t.Fatalf("MannWhitney(%v, %v) = %v, %v; pair count %v", a, b, u, p, pairs)
		}
	}
}

func TestMannWhitneyDegenerate(t *testing.T) {
	if u, p := MannWhitney(nil, []float64{1}); !math.IsNaN(u) || !math.IsNaN(p) {
		t.Errorf("empty: got %v, %v", u, p)
	}
	if u, p := MannWhitney([]float64{1, math.NaN()}, []float64{1}); !math.IsNaN(u) || !math.IsNaN(p) {
		t.Errorf("NaN: got %v, %v", u, p)
	}
	if u, p := MannWhitney([]float64{2, 2, 2}, []float64{2, 2}); u != 3 || p != 1 {
		t.Errorf("all equal: got U=%v p=%v, want 3, 1", u, p)
	}
	if u, p := MannWhitney([]float64{1}, []float64{2}); u != 0 || p != 1 {
		t.Errorf("one each: got U=%v p=%v, want 0, 1", u, p)
	}
}

func seq(from, to float64) []float64 {
	var xs []float64
	for x := from; x <= to; x++ {
		xs = append(xs, x)
	}
	return xs
}
