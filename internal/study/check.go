package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/placeholder"
	"gopkg.in/yaml.v3"
)

// check validates what spans fields: references, models and bounds.
func (d *decoder) check(s *Study) {
	for _, svc := range s.Services {
		f := join("services", svc.Name)
		if svc.Build != "" && s.Build(svc.Build) == nil {
			d.errorf(nil, join(f, "build"), "no build named %q", svc.Build)
		}
		for _, a := range svc.After {
			if s.Service(a) == nil || a == svc.Name {
				d.errorf(nil, join(f, "after"), "no other service named %q (dependencies start before every service)", a)
			}
		}
		if s.Dependency(svc.Name) != nil {
			d.errorf(nil, f, "a dependency has the same name")
		}
		d.checkWhen(s, svc)
	}
	for _, svc := range s.Services {
		if svc.ReplicasFrom == "" {
			continue
		}
		f := join(join("services", svc.Name), "replicas")
		i := slices.IndexFunc(s.Variants, func(a Axis) bool { return a.Name == svc.ReplicasFrom })
		if i < 0 {
			d.errorf(nil, f, "{%s} is not an axis", svc.ReplicasFrom)
			continue
		}
		for _, v := range s.Variants[i].Values {
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				d.errorf(nil, f, "axis %s value %q is not a replica count (a whole number ≥ 1)", svc.ReplicasFrom, v)
			}
		}
	}
	for i, st := range s.Load.Steps {
		f := fmt.Sprintf("load.steps[%d]", i)
		for _, h := range append(slices.Clone(st.Before), st.Collect...) {
			if h.Service != "" && s.Service(h.Service) == nil {
				d.errorf(nil, f, "hook %s: no service named %q", h.Name, h.Service)
			}
		}
		for _, ev := range st.Events {
			if ev.Action == "link" {
				d.checkLinkEvent(s, ev, f)
			} else if ev.Action != "request" && s.Service(ev.Target) == nil && s.Dependency(ev.Target) == nil {
				d.errorf(nil, f, "event %s: no service or dependency named %q", ev.Action, ev.Target)
			}
		}
	}
	if c := cycle(s); c != nil {
		d.errorf(nil, join(join("services", c[len(c)-2]), "after"), "start order has a cycle: %s", strings.Join(c, " → "))
	}
	if s.Load.Service != "" && s.Service(s.Load.Service) == nil {
		msg := fmt.Sprintf("no service named %q", s.Load.Service)
		if placeholder.Pattern.MatchString(s.Load.Service) {
			// The runner and the analyses read one service, by name, in
			// every variant.
			msg = fmt.Sprintf("%q: the load goes to one service, named as it is in services:, in every variant; to vary what answers it, give that service's command from the variant (command: \"{AXIS.ATTR}\", the axis' values being mappings) and start other services only in the variants that need them (when:)", s.Load.Service)
		}
		d.errorf(nil, "load.service", "%s", msg)
	}
	names := map[string]bool{}
	for i, st := range s.Load.Steps {
		f := fmt.Sprintf("load.steps[%d]", i)
		if st.Name == "" {
			d.errorf(&yaml.Node{Line: st.line}, f, "a step needs a name")
		} else if names[st.Name] {
			d.errorf(&yaml.Node{Line: st.line}, f, "step name %q used twice", st.Name)
		}
		names[st.Name] = true
		if msg := st.problem(); msg != "" {
			d.errorf(&yaml.Node{Line: st.line}, f, "%s", msg)
		}
	}
	seen := map[string]bool{}
	for i, t := range s.Setup {
		if seen[t.Name] {
			d.errorf(nil, fmt.Sprintf("setup[%d]", i), "setup name %q used twice: give each a name", t.Name)
		}
		seen[t.Name] = true
	}
	d.checkPlaceholders(s)
	d.checkPlacement(s)
	d.checkLinks(s)
	d.checkHosts(s)
}

// problem explains why a step cannot run, or returns "": the load is
// checked by the same code as msbench load's.
func (st *Step) problem() string {
	if len(st.Targets) == 0 {
		return "no targets"
	}
	if err := st.Load.Validate(); err != nil {
		return err.Error()
	}
	return ""
}

// cycle returns the services of a start-order cycle, the one met twice
// first and last, or nil.
func cycle(s *Study) []string {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, path []string) []string
	visit = func(name string, path []string) []string {
		switch state[name] {
		case 1:
			return append(path, name)
		case 2:
			return nil
		}
		state[name] = 1
		if svc := s.Service(name); svc != nil {
			for _, a := range svc.After {
				if c := visit(a, append(path, name)); c != nil {
					return c
				}
			}
		}
		state[name] = 2
		return nil
	}
	for _, svc := range s.Services {
		if c := visit(svc.Name, nil); c != nil {
			return c
		}
	}
	return nil
}

// StartOrder lists services so that each comes after those it waits for.
func (s *Study) StartOrder() []*Service {
	var out []*Service
	done := map[string]bool{}
	var add func(*Service)
	add = func(svc *Service) {
		if done[svc.Name] {
			return
		}
		done[svc.Name] = true
		for _, a := range svc.After {
			if dep := s.Service(a); dep != nil {
				add(dep)
			}
		}
		out = append(out, svc)
	}
	for _, svc := range s.Services {
		add(svc)
	}
	return out
}
