package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/placeholder"
	"gopkg.in/yaml.v3"
)

// Link emulates the network between two parts of the study, which all run
// on this machine: the runner puts a proxy with the link's latency, jitter
// and bandwidth between them (package links), and From is told the
// proxy's address instead of To's. A link is given in the study file as
//
//	links:
//	  - {from: gateway, to: rpcserver, latency: "{delay}", jitter: 0.1ms, bandwidth: 1Gbps}
//	  - {from: api, to: db, latency: 1ms}
//	  - {from: generator, to: gateway, latency: 2ms}
//
// Latency, Jitter and Bandwidth are kept as written: they may name axes
// ({delay}, {net.latency}), so that the variants sweep the distance.
type Link struct {
	From      string `json:"From"`      // a service, or Generator for the load's own requests
	To        string `json:"To"`        // a service or dependency; the load's service when From is Generator
	Latency   string `json:"Latency"`   // one way, e.g. 2ms; "" for 0
	Jitter    string `json:"Jitter"`    // e.g. 0.1ms; "" for none
	Bandwidth string `json:"Bandwidth"` // e.g. 1Gbps; "" for no limit
	line      int
}

// Generator as a link's from is the load generator: the load, setup,
// verification and event requests to the load's service go through the
// link.
const Generator = "generator"

// Name is how events name the link: FROM>TO.
func (l *Link) Name() string { return l.From + ">" + l.To }

// Spec resolves the link's settings with a variant's placeholders
// (Study.Placeholders).
func (l *Link) Spec(values map[string]string) (links.Spec, error) {
	var spec links.Spec
	var err error
	field := func(name, text string, parse func(string) error) {
		if err != nil || text == "" {
			return
		}
		var v string
		if v, err = placeholder.Expand(text, values); err == nil {
			err = parse(v)
		}
		if err != nil {
			err = fmt.Errorf("link %s: %s: %w", l.Name(), name, err)
		}
	}
	field("latency", l.Latency, func(s string) (err error) { spec.Latency, err = links.ParseDuration(s); return })
	field("jitter", l.Jitter, func(s string) (err error) { spec.Jitter, err = links.ParseDuration(s); return })
	field("bandwidth", l.Bandwidth, func(s string) (err error) { spec.Bandwidth, err = links.ParseBandwidth(s); return })
	return spec, err
}

// Link returns the link named FROM>TO, or nil.
func (s *Study) Link(name string) *Link {
	for _, l := range s.Links {
		if l.Name() == name {
			return l
		}
	}
	return nil
}

// checkLinks validates what the links name, and their settings in every
// variant.
func (d *decoder) checkLinks(s *Study) {
	seen := map[string]bool{}
	for i, l := range s.Links {
		f := fmt.Sprintf("links[%d]", i)
		at := &yaml.Node{Line: l.line}
		if l.From == "" || l.To == "" {
			continue
		}
		switch {
		case l.From == Generator && s.Service(Generator) != nil:
			d.errorf(at, join(f, "from"), "%q names both the load generator and a service: rename the service", Generator)
		case l.From == Generator:
			if l.To != s.Load.Service {
				d.errorf(at, join(f, "to"), "from %s, a link goes to the load's service %q, not %q", Generator, s.Load.Service, l.To)
			}
		case s.Service(l.From) == nil:
			d.errorf(at, join(f, "from"), "no service named %q (or %s, for the load's own requests)", l.From, Generator)
		}
		switch {
		case l.To == l.From:
			d.errorf(at, f, "a link from %s to itself", l.From)
		case s.Service(l.To) == nil && s.Dependency(l.To) == nil:
			d.errorf(at, join(f, "to"), "no service or dependency named %q", l.To)
		}
		if seen[l.Name()] {
			d.errorf(at, f, "link %s given twice", l.Name())
		}
		seen[l.Name()] = true
		// Every variant's values, so that an axis value that is no
		// duration is found now, not in the middle of a run.
		problems := map[string][]string{}
		var order []string
		for _, v := range s.Matrix() {
			if _, err := l.Spec(s.Placeholders(v)); err != nil {
				msg := strings.TrimPrefix(err.Error(), "link "+l.Name()+": ")
				if problems[msg] == nil {
					order = append(order, msg)
				}
				problems[msg] = append(problems[msg], v.Key())
			}
		}
		for _, msg := range order {
			d.errorf(at, f, "%s (variants %s)", msg, strings.Join(problems[msg], ", "))
		}
	}
}

// linkEvent checks the fields of an event that only a link event takes:
// {at: 3s, link: gateway>rpcserver, fault: reset}, {…, fault: none} to
// clear, {…, fault: slow_close, delay: 2s}.
func (d *decoder) linkEvent(field, action string, ev *eventSection) {
	switch {
	case action == "link" && ev.Fault == "":
		d.errorf(nil, join(field, "fault"), "missing: a link event needs a fault (%s)", strings.Join(links.Faults, ", "))
	case action != "link" && (ev.Fault != "" || ev.Delay != 0):
		d.errorf(nil, field, "fault and delay are for link events")
	case ev.Delay != 0 && string(ev.Fault) != string(links.SlowClose):
		d.errorf(nil, join(field, "delay"), "a delay is for fault %s (how long it holds a close)", links.SlowClose)
	}
}

// checkLinkEvent checks that a link event names a declared link.
func (d *decoder) checkLinkEvent(s *Study, ev *Event, field string) {
	if s.Link(ev.Target) != nil {
		return
	}
	var known []string
	for _, l := range s.Links {
		known = append(known, l.Name())
	}
	slices.Sort(known)
	declared := "none declared"
	if known != nil {
		declared = "declared: " + strings.Join(known, ", ")
	}
	d.errorf(&yaml.Node{Line: ev.line}, field, "event link: no link %q (a link is named FROM>TO; %s)", ev.Target, declared)
}
