package study

import (
	"maps"
	"reflect"
	"slices"

	"gopkg.in/yaml.v3"
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
	None         bool              `json:"None,omitempty"`
	Generator    string            `json:"Generator,omitempty"`
	Services     map[string]string `json:"Services,omitempty"`
	Dependencies map[string]string `json:"Dependencies,omitempty"`
}

// PlacementAll is the value that places a process on every core.
const PlacementAll = "all"

// placementSection is the placement: field, a mapping or "none".
type placementSection struct {
	none   bool
	Placed struct {
		Generator    cores            `yaml:"generator"`
		Services     map[string]cores `yaml:"services"`
		Dependencies map[string]cores `yaml:"dependencies"`
	}
}

func (p *placementSection) decodeNode(d *decoder, n *yaml.Node, field string) {
	if n.Kind != yaml.ScalarNode {
		d.decode(n, field, reflect.ValueOf(&p.Placed).Elem())
		return
	}
	if v, err := scalar(n); err != nil || v != AANone {
		d.errorf(n, field, "want a mapping of generator, services and dependencies, or %s, got %q", AANone, v)
	}
	p.none = true
}

// placement is the Placement the section gives, nil when there is none.
func (p *placementSection) placement() *Placement {
	if p == nil {
		return nil
	}
	if p.none {
		return &Placement{None: true}
	}
	names := func(m map[string]cores) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	return &Placement{Generator: string(p.Placed.Generator), Services: names(p.Placed.Services), Dependencies: names(p.Placed.Dependencies)}
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
			d.errorf(nil, f, "no service named %q", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Dependencies)) {
		if f := "placement.dependencies." + name; s.Dependency(name) == nil {
			d.errorf(nil, f, "no dependency named %q", name)
		}
	}
}
