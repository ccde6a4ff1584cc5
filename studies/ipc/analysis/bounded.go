package ipc

import (
	"maps"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
)

// Direction of a bound: a time to failure beyond a time-boxed step is at
// least the step's length, a knee beyond the sweep at least its highest
// rate, one below the sweep less than its lowest.
const (
	exact   = 0
	atLeast = 1
	atMost  = -1
)

// bounded is a measured value that its step or sweep may have censored:
// exactly v, at least v, or at most v. Comparisons keep the direction,
// and say when there is none to keep, so that a bound is never read as a
// measurement.
type bounded struct {
	v   float64
	dir int
}

func (b bounded) String() string { return b.format(0) }

func (b bounded) format(digits int) string {
	s := analysis.Num(b.v, digits)
	switch b.dir {
	case atLeast:
		return "≥ " + s
	case atMost:
		return "≤ " + s
	}
	return s
}

// sign keeps the direction of a difference of directions.
func sign(d int) int {
	switch {
	case d > 0:
		return atLeast
	case d < 0:
		return atMost
	}
	return exact
}

// ratio is a/b, a bound when either is; false when the two bounds point
// the same way (both beyond a time box say nothing about their order) or
// b is zero.
func ratio(a, b bounded) (bounded, bool) {
	if (a.dir != exact && a.dir == b.dir) || b.v == 0 {
		return bounded{}, false
	}
	return bounded{a.v / b.v, sign(a.dir - b.dir)}, true
}

// availability is MTTF / (MTTF + MTTR): it grows with the time to failure
// and shrinks with the time to recovery, and bounds carry over that way.
func availability(mttf, mttr bounded) (bounded, bool) {
	if mttf.v == 0 {
		return bounded{0, exact}, mttr.v > 0 // unavailable from the start
	}
	q, ok := ratio(mttr, mttf)
	if !ok {
		return bounded{}, false
	}
	return bounded{1 / (1 + q.v), -q.dir}, true
}

// highest is the larger of several values: at least the largest value
// known to be reached; exact when a measured value tops every bound.
func highest(xs []bounded) (bounded, bool) {
	if len(xs) == 0 {
		return bounded{}, false
	}
	reached, ceiling, beyond := -1.0, -1.0, false
	for _, x := range xs {
		if x.dir == atMost {
			ceiling = max(ceiling, x.v)
			continue
		}
		reached = max(reached, x.v)
		beyond = beyond || x.dir == atLeast
	}
	switch {
	case beyond:
		return bounded{reached, atLeast}, true
	case reached >= ceiling:
		return bounded{reached, exact}, true
	}
	return bounded{ceiling, atMost}, true
}

// mean is the arithmetic mean of values bounded the same way; false when
// bounds point both ways.
func mean(xs []bounded) (bounded, bool) {
	out := bounded{}
	for _, x := range xs {
		if x.dir != exact && out.dir != exact && x.dir != out.dir {
			return bounded{}, false
		}
		out.v += x.v / float64(len(xs))
		if x.dir != exact {
			out.dir = x.dir
		}
	}
	return out, len(xs) > 0
}

// list formats per-repetition values in repetition order: bounds shown as
// such rather than summarised into a number they are not.
func list(runs map[int]bounded, digits int) string {
	if len(runs) == 0 {
		return "–"
	}
	var out []string
	for _, rep := range slices.Sorted(maps.Keys(runs)) {
		out = append(out, runs[rep].format(digits))
	}
	return strings.Join(out, ", ")
}

// across combines, repetition by repetition, one value of each of several
// variants measured side by side, by f; a repetition that lacks one is
// left out, and one for which f can say nothing (ok false) is counted in
// undetermined.
func across[T any](f func(xs []T) (float64, bool), runs ...map[int]T) (out map[int]float64, undetermined int) {
	out = map[int]float64{}
	if len(runs) == 0 {
		return out, 0
	}
	for rep := range runs[0] {
		xs := make([]T, 0, len(runs))
		for _, r := range runs {
			if x, ok := r[rep]; ok {
				xs = append(xs, x)
			}
		}
		if len(xs) < len(runs) {
			continue
		}
		if v, ok := f(xs); ok {
			out[rep] = v
		} else {
			undetermined++
		}
	}
	return out, undetermined
}

// byRep lists per-repetition values in repetition order: a metric's PerRun.
func byRep(m map[int]float64) []float64 {
	var out []float64
	for _, rep := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[rep])
	}
	return out
}
