package study

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Needs is what a study's analysis reads: axes by name, and steps by
// their parameters. A study file is checked against it when it is loaded,
// so that a renamed step or axis is an error before anything runs rather
// than an empty part of a report after.
type Needs struct {
	Axes  []string
	Steps []StepNeed
	// Metrics are the ids of the metrics the analysis measures, which the
	// study's claims may be judged on.
	Metrics []string
}

// StepNeed selects steps by parameter values and names the parameters
// each selected step must have.
type StepNeed struct {
	Where  map[string]string // e.g. {"kind": "outage"}; every pair must match
	Params []string          // e.g. ["dependency"]
	For    string            // what the analysis does with them, for messages
}

// Matches reports whether the step's parameters include every pair of
// where.
func (st *Step) Matches(where map[string]string) bool {
	for k, v := range where {
		if st.Params[k] != v {
			return false
		}
	}
	return true
}

func (n StepNeed) String() string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(n.Where)) {
		pairs = append(pairs, k+"="+n.Where[k])
	}
	return "params " + strings.Join(pairs, ", ")
}

// Check verifies that the study has every axis and step the needs name,
// with the parameters they read; errors name file, line and field.
func (s *Study) Check(n Needs) error { return s.check(n, true) }

// CheckRun is Check for a study as run: a profile may have skipped steps,
// which the analysis reports as not measured, but axes and parameters
// must still be there.
func (s *Study) CheckRun(n Needs) error { return s.check(n, false) }

func (s *Study) check(n Needs, stepsRequired bool) error {
	var errs []error
	fail := func(line int, field, format string, args ...any) {
		errs = append(errs, &FieldError{File: s.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	for _, axis := range n.Axes {
		if !slices.ContainsFunc(s.Variants, func(a Axis) bool { return a.Name == axis }) {
			fail(s.lines.variants, "variants", "the %s analysis reads the axis %q, which the study lacks", s.Name, axis)
		}
	}
	for _, need := range n.Steps {
		found := false
		for i, st := range s.Load.Steps {
			if !st.Matches(need.Where) {
				continue
			}
			found = true
			for _, p := range need.Params {
				if _, ok := st.Params[p]; !ok {
					fail(st.line, fmt.Sprintf("load.steps[%d]", i), "the %s analysis reads parameter %q of steps with %s (%s); step %q lacks it", s.Name, p, need, need.For, st.Name)
				}
			}
		}
		if !found && stepsRequired {
			fail(s.lines.load, "load.steps", "the %s analysis needs a step with %s (%s); none has them", s.Name, need, need.For)
		}
	}
	return errors.Join(errs...)
}
