package study

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// SideBySide returns a copy of s that measures every variant once per
// side (msbench ab measures two builds of a study so): a first axis named
// axis whose values are the sides, in order; no A/A twin, since the sides
// are each other's comparison and the run's repetitions give the
// intervals; and the first side's first variant as the baseline. The
// runner is told which checkout each side is deployed from (Sources).
func (s *Study) SideBySide(axis string, sides []string) (*Study, error) {
	if slices.ContainsFunc(s.Variants, func(a Axis) bool { return a.Name == axis }) {
		return nil, fmt.Errorf("%s: the study has an axis %q already, which the sides cannot be named by", s.File, axis)
	}
	out := *s
	out.Variants = append([]Axis{{Name: axis, Values: slices.Clone(sides)}}, s.Variants...)
	if s.Only != nil {
		// The kept variants on each side, keyed as the new matrix keys
		// them.
		out.Only = nil
		for _, side := range sides {
			for _, v := range s.Matrix() {
				out.Only = append(out.Only, Variant{Values: append([][2]string{{axis, side}}, v.Values...)}.Key())
			}
		}
	}
	out.AA = ""
	out.Baseline = out.Matrix()[0].Key()
	return &out, nil
}

// KeepVariants narrows the matrix to the variants named by keys: each
// axis keeps the values they use, so that the kept matrix is the smallest
// that holds them all (gin-pooled and echo-dial keep gin-dial and
// echo-pooled too). An unknown key is an error listing the known.
func (s *Study) KeepVariants(keys []string) error {
	byKey := map[string]Variant{}
	var known []string
	for _, v := range s.Matrix() {
		byKey[v.Key()] = v
		known = append(known, v.Key())
	}
	keep := map[string][]string{}
	for _, k := range keys {
		v, ok := byKey[k]
		if !ok {
			return fmt.Errorf("%s: no variant %q (variants: %s)", s.File, k, strings.Join(known, ", "))
		}
		for _, kv := range v.Values {
			if !slices.Contains(keep[kv[0]], kv[1]) {
				keep[kv[0]] = append(keep[kv[0]], kv[1])
			}
		}
	}
	for i := range s.Variants {
		a := &s.Variants[i]
		if a.declared == nil {
			a.declared = a.Values
		}
		// In the axis' own order, whatever the order of keys.
		a.Values = slices.DeleteFunc(slices.Clone(a.Values), func(v string) bool { return !slices.Contains(keep[a.Name], v) })
	}
	return nil
}

// KeepSteps keeps the steps whose names match any of the globs, in their
// order; a glob that matches no step is an error listing the steps.
func (s *Study) KeepSteps(globs []string) error {
	matched := make([]bool, len(globs))
	var kept []*Step
	var names []string
	for _, st := range s.Load.Steps {
		names = append(names, st.Name)
		keep := false
		for i, g := range globs {
			ok, err := path.Match(g, st.Name)
			if err != nil {
				return fmt.Errorf("step pattern %q: %w", g, err)
			}
			matched[i] = matched[i] || ok
			keep = keep || ok
		}
		if keep {
			kept = append(kept, st)
		}
	}
	if i := slices.Index(matched, false); i >= 0 {
		return fmt.Errorf("%s: no step matches %q (steps: %s)", s.File, globs[i], strings.Join(names, ", "))
	}
	s.Load.Steps = kept
	return nil
}
