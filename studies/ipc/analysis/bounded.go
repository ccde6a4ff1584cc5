package ipc

import (
	"fmt"
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

// leftOut counts the repetitions a combination across variants could not
// give a value for, so that a metric's note says why it has fewer.
type leftOut struct {
	unpaired  int // some variant measured it and another lacks it
	unsettled int // f could say nothing of it
}

// words says what was left out, as a note's tail; "" when nothing was.
func (l leftOut) words() string {
	var out string
	if l.unpaired > 0 {
		out += fmt.Sprintf("; %d repetition(s) left out: a style lacks the step there (not measured, or its noise audit failed)", l.unpaired)
	}
	if l.unsettled > 0 {
		out += fmt.Sprintf("; %d repetition(s) left out: their bounds settle nothing or the divisor is 0", l.unsettled)
	}
	return out
}

func (l leftOut) any() bool { return l.unpaired+l.unsettled > 0 }

// across combines, repetition by repetition, one value of each of several
// variants measured side by side, by f. A repetition that some variant
// measured and another lacks is left out and counted as unpaired; one for
// which f can say nothing (ok false) is counted as unsettled.
func across[T any](f func(xs []T) (float64, bool), runs ...map[int]T) (out map[int]float64, left leftOut) {
	out = map[int]float64{}
	reps := map[int]bool{}
	for _, r := range runs {
		for rep := range r {
			reps[rep] = true
		}
	}
	for rep := range reps {
		xs := make([]T, 0, len(runs))
		for _, r := range runs {
			if x, ok := r[rep]; ok {
				xs = append(xs, x)
			}
		}
		if len(xs) < len(runs) {
			left.unpaired++
			continue
		}
		if v, ok := f(xs); ok {
			out[rep] = v
		} else {
			left.unsettled++
		}
	}
	return out, left
}

// byRep lists per-repetition values in repetition order: a metric's PerRun.
func byRep(m map[int]float64) []float64 {
	var out []float64
	for _, rep := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[rep])
	}
	return out
}
