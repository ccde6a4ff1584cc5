package study

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/msbench/msbench/internal/placement"
)

// Placement is a study file's placement: which cores the load generator
// (msbench itself) and each service and dependency run on:
//
//	placement:
//	  generator: "0"
//	  services: {gateway: "1", rpcserver: "1"}
//	  dependencies: {db: "1"}
//
// A value is a core list ("0", "0-1", "0,2") or "all" (every core, not
// placed). What a placement leaves out takes the default: on a machine of
// two or more cores the generator gets the first core and every service
// and dependency the others; on one core nothing is placed. "placement:
// none" places nothing. Whether the cores exist is checked when the study
// runs, on the machine it runs on, not here: study files travel.
type Placement struct {
	None         bool              `json:",omitempty"`
	Generator    string            `json:",omitempty"`
	Services     map[string]string `json:",omitempty"`
	Dependencies map[string]string `json:",omitempty"`
	lines        map[string]int    // name → line, for checkPlacement
}

// PlacementAll is the value that places a process on every core.
const PlacementAll = "all"

// placement reads the placement: field.
func (d *decoder) placement(n *yaml.Node) *Placement {
	const field = "placement"
	if n.Kind == yaml.ScalarNode {
		if v := d.str(n, field); v != AANone {
			d.errorf(n, field, "want a mapping of generator, services and dependencies, or %s, got %q", AANone, v)
		}
		return &Placement{None: true}
	}
	p := &Placement{lines: map[string]int{}}
	for _, e := range d.mapping(n, field, "generator", "services", "dependencies") {
		f := join(field, e.key)
		switch e.key {
		case "generator":
			p.Generator = d.cores(e.value, f)
		case "services":
			p.Services = d.coresByName(e.value, f, p.lines)
		case "dependencies":
			p.Dependencies = d.coresByName(e.value, f, p.lines)
		}
	}
	return p
}

func (d *decoder) coresByName(n *yaml.Node, field string, lines map[string]int) map[string]string {
	out := map[string]string{}
	for _, e := range d.mapping(n, field) {
		out[e.key] = d.cores(e.value, join(field, e.key))
		lines[join(field, e.key)] = e.keyN.Line
	}
	return out
}

// cores reads a core list or "all", in the list's canonical form.
func (d *decoder) cores(n *yaml.Node, field string) string {
	s := strings.TrimSpace(d.nonEmpty(n, field))
	if s == "" || s == PlacementAll {
		return s
	}
	c, err := placement.Parse(s)
	if err != nil {
		d.errorf(n, field, "%v, or %s", err, PlacementAll)
		return ""
	}
	return c.String()
}

// checkPlacement verifies that the placement names services and
// dependencies of the study.
func (d *decoder) checkPlacement(s *Study) {
	p := s.Placement
	if p == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		if f := "placement.services." + name; s.Service(name) == nil {
			d.errorf(&yaml.Node{Line: p.lines[f]}, f, "no service named %q", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Dependencies)) {
		if f := "placement.dependencies." + name; s.Dependency(name) == nil {
			d.errorf(&yaml.Node{Line: p.lines[f]}, f, "no dependency named %q", name)
		}
	}
}
