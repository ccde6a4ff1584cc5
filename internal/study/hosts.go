package study

import (
	"gopkg.in/yaml.v3"
)

// Host is an emulated machine of a study file's hosts: a network namespace
// of its own with its own address, on which the named services run. The
// generator and the dependencies stay on msbench's side:
//
//	hosts:
//	  edge: [gateway]
//	  functions: [rpc]
//
// A study with hosts puts every service on one of them, so that each
// address a service is told is one it can reach.
type Host struct {
	Name     string   `json:"Name"`
	Services []string `json:"Services"`
	line     int
}

// checkHosts verifies that the hosts name services of the study, each
// once, and every one of them.
func (d *decoder) checkHosts(s *Study) {
	if len(s.Hosts) == 0 {
		return
	}
	on := map[string]string{}
	for _, h := range s.Hosts {
		f := join("hosts", h.Name)
		for _, name := range h.Services {
			switch {
			case s.Service(name) == nil:
				d.errorf(&yaml.Node{Line: h.line}, f, "no service named %q", name)
			case on[name] != "":
				d.errorf(&yaml.Node{Line: h.line}, f, "service %q is already on host %s; a service runs on one host", name, on[name])
			default:
				on[name] = h.Name
			}
		}
	}
	for _, svc := range s.Services {
		if on[svc.Name] == "" {
			d.errorf(&yaml.Node{Line: s.Hosts[0].line}, "hosts", "service %q is on no host: with hosts, every service needs one (the generator and the dependencies stay on msbench's side)", svc.Name)
		}
	}
}

// HostOf returns the host a service runs on, or nil without hosts.
func (s *Study) HostOf(service string) *Host {
	for _, h := range s.Hosts {
		for _, name := range h.Services {
			if name == service {
				return h
			}
		}
	}
	return nil
}
