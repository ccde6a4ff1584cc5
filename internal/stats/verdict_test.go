package stats

import (
	"strings"
	"testing"
)

func scaled(xs []float64, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = k * x
	}
	return out
}

func TestDiffers(t *testing.T) {
	base := normalSample(30, 11)
	cases := []struct {
		name     string
		a, b     []float64
		level    float64
		real     bool
		contains []string
	}{
		{"clearly slower", scaled(normalSample(30, 12), 1.84), base, 0.95, true,
			[]string{"median 1.", "× (95% CI ", "–", "p < 0.001"}},
		{"same distribution", normalSample(30, 15), base, 0.95, false,
			[]string{"no clear difference: median ", "p = "}},
		{"all equal", []float64{5, 5, 5, 5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5, 5, 5, 5}, 0.95, false,
			[]string{"median 1.00× (95% CI 1.00–1.00), p = 1"}},
		{"small n", []float64{10, 11, 12}, []float64{20, 21, 22}, 0.95, false,
			[]string{"p is approximate", "n = 3 vs 3"}},
		{"too few", []float64{1}, []float64{1, 2}, 0.95, false, []string{"not enough data"}},
		{"empty", nil, nil, 0.95, false, []string{"not enough data to compare (n = 0 vs 0)"}},
		{"bad level", base, base, 95, false, []string{"invalid confidence level"}},
		{"zero median", []float64{1, 2}, []float64{0, 0, 0}, 0.95, false, []string{"cannot compare"}},
		{"level 99.9", scaled(normalSample(30, 14), 3), base, 0.999, true, []string{"(99.9% CI "}},
	}
	for _, c := range cases {
		real, why := Differs(c.a, c.b, c.level)
		if real != c.real {
			t.Errorf("%s: real = %v, want %v (%s)", c.name, real, c.real, why)
		}
		for _, s := range c.contains {
			if !strings.Contains(why, s) {
				t.Errorf("%s: %q lacks %q", c.name, why, s)
			}
		}
		if _, again := Differs(c.a, c.b, c.level); again != why {
			t.Errorf("%s: explanation changed between calls: %q vs %q", c.name, why, again)
		}
		t.Logf("%s: %v, %s", c.name, real, why)
	}
}

func TestFormatting(t *testing.T) {
	cases := map[float64]string{1.8449: "1.84", 12.34: "12.3", 123.4: "123", 0.5432: "0.543", 1: "1.00"}
	for x, want := range cases {
		if got := sig3(x); got != want {
			t.Errorf("sig3(%v) = %q, want %q", x, got, want)
		}
	}
	if got := percent(0.95); got != "95" {
		t.Errorf("percent(0.95) = %q", got)
	}
	if got := pValue(0.0342); got != "p = 0.034" {
		t.Errorf("pValue(0.0342) = %q", got)
	}
}
