package analysis

import (
	"math"
	"slices"
	"testing"
)

func TestGeoMeanByRep(t *testing.T) {
	for _, c := range []struct {
		name   string
		ratios map[string]map[int]float64
		want   map[int]float64
		kept   []string
		lost   []string
	}{
		{"every case everywhere",
			map[string]map[int]float64{"a": {1: 2, 2: 2, 3: 2}, "b": {1: 0.5, 2: 0.5, 3: 0.5}, "c": {1: 1, 2: 1, 3: 1}},
			map[int]float64{1: 1, 2: 1, 3: 1}, []string{"a", "b", "c"}, nil},
		// b lost in repetition 3: left out of all, so that every
		// repetition's mean is over a and c (not 1, 1 and √2).
		{"a case one repetition lost",
			map[string]map[int]float64{"a": {1: 2, 2: 2, 3: 2}, "b": {1: 0.5, 2: 0.5}, "c": {1: 1, 2: 1, 3: 1}},
			map[int]float64{1: math.Sqrt2, 2: math.Sqrt2, 3: math.Sqrt2}, []string{"a", "c"}, []string{"b"}},
		{"a case never measured",
			map[string]map[int]float64{"a": {1: 2, 2: 2}, "c": {1: 1, 2: 1}},
			map[int]float64{1: math.Sqrt2, 2: math.Sqrt2}, []string{"a", "c"}, []string{"b"}},
		{"a ratio without a value counts as missing",
			map[string]map[int]float64{"a": {1: 2, 2: 2}, "b": {1: 0.5, 2: math.NaN()}, "c": {1: 1, 2: 0}},
			map[int]float64{1: 2, 2: 2}, []string{"a"}, []string{"b", "c"}},
		// A repetition without the pair restricts nothing: repetition 2
		// measured no case.
		{"a repetition with nothing",
			map[string]map[int]float64{"a": {1: 2, 3: 2}, "b": {1: 0.5, 3: 0.5}, "c": {1: 1, 3: 1}},
			map[int]float64{1: 1, 3: 1}, []string{"a", "b", "c"}, nil},
		{"no case in every repetition",
			map[string]map[int]float64{"a": {1: 2}, "b": {2: 0.5}},
			map[int]float64{}, nil, []string{"a", "b", "c"}},
		{"nothing measured", map[string]map[int]float64{}, map[int]float64{}, nil, []string{"a", "b", "c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, kept, lost := GeoMeanByRep([]string{"a", "b", "c"}, c.ratios)
			if !slices.Equal(kept, c.kept) || !slices.Equal(lost, c.lost) || len(got) != len(c.want) {
				t.Fatalf("kept %v, lost %v, %v; want %v, %v, %v", kept, lost, got, c.kept, c.lost, c.want)
			}
			for rep, w := range c.want {
				if math.Abs(got[rep]-w) > 1e-12 {
					t.Errorf("repetition %d: %v, want %v", rep, got[rep], w)
				}
			}
		})
	}
}

func TestLeftOut(t *testing.T) {
	if got := LeftOut(nil); got != "" {
		t.Errorf("nothing left out: %q", got)
	}
	if got := LeftOut([]string{"gin/echo: pooled/empty, dial/math", "gin/iris: pooled/empty"}); got != "; left out, as not measured in every repetition (a step that failed its noise audit): gin/echo: pooled/empty, dial/math; gin/iris: pooled/empty" {
		t.Errorf("two pairs left out: %q", got)
	}
}
