package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// edge is one emulated link of a deployment: a proxy in front of every
// instance of the link's To (one per replica; one for a dependency).
type edge struct {
	link    *study.Link
	spec    links.Spec
	real    []string // the addresses the proxies forward to
	proxies []*links.Proxy
}

// addrs lists the proxies' addresses, in replica order.
func (e *edge) addrs() []string {
	out := make([]string, len(e.proxies))
	for i, p := range e.proxies {
		out[i] = p.Addr()
	}
	return out
}

// linkPortTries bounds the ports tried for one proxy: a port the
// allocator found free may be taken by another process before the proxy
// binds it.
const linkPortTries = 5

// startLinks starts a proxy for every link of the study, with the
// variant's settings, before the services that will be told to use them;
// the services' addresses are chosen, and the dependencies run.
func (d *Deployment) startLinks(_ context.Context, values map[string]string) error {
	c := d.cfg
	for _, l := range c.study.Links {
		spec, err := l.Spec(values)
		if err != nil {
			return fmt.Errorf("deploy: %w", err)
		}
		e := &edge{link: l, spec: spec, real: d.addrs[l.To]}
		if dep := d.dependency(l.To); dep != nil {
			e.real = []string{dep.Addr}
		}
		d.links = append(d.links, e)
		for i, upstream := range e.real {
			name := l.Name()
			if i > 0 {
				name += "-" + strconv.Itoa(i)
			}
			p, err := startProxy(c, d.listenHost(), name, upstream, spec)
			if err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
			e.proxies = append(e.proxies, p)
		}
		c.progress("  link %s (%s) on %s", l.Name(), spec, strings.Join(e.addrs(), ","))
	}
	return nil
}

// startProxy starts a proxy on host, on a free port.
func startProxy(c deployConfig, host, name, upstream string, spec links.Spec) (*links.Proxy, error) {
	var err error
	for range linkPortTries {
		var port int
		if port, err = c.ports.Next(); err != nil {
			return nil, fmt.Errorf("link %s: %w", name, err)
		}
		var p *links.Proxy
		if p, err = links.Start(name, net.JoinHostPort(host, strconv.Itoa(port)), upstream, spec); err == nil {
			return p, nil
		}
	}
	return nil, err
}

// linkValues returns the placeholders as service sees them: where a link
// leads from it, {service.TO.addr|addrs|port} and {dep.TO.KEY} name the
// link's proxies instead (a dependency's url and dsn with the proxy's
// host:port), and so do axis attributes that name them. On an emulated
// host, a dependency without a link is reached through its forwarder.
func (d *Deployment) linkValues(c deployConfig, service string, shared map[string]string) (map[string]string, error) {
	var out map[string]string
	own := func() {
		if out == nil {
			out = maps.Clone(shared)
		}
	}
	if d.host(c, service) != nil {
		for _, dep := range d.deps {
			if p := d.forward(dep.Addr); p != nil {
				own()
				depThrough(out, dep, p.Addr())
			}
		}
	}
	for _, e := range d.links {
		if e.link.From != service {
			continue
		}
		own()
		proxies := e.addrs()
		if dep := d.dependency(e.link.To); dep != nil {
			depThrough(out, dep, proxies[0])
			continue
		}
		study.SetServiceAddrs(out, e.link.To, proxies)
	}
	if out == nil {
		return shared, nil
	}
	return out, c.study.ExpandAttrs(c.variant, out)
}

// depThrough sets dep's placeholders in values to reach it through the
// proxy at addr.
func depThrough(values map[string]string, dep *deps.Instance, addr string) {
	throughDep(values, dep.Name, dep.Values, dep.Addr, addr)
}

// throughDep sets the placeholders of dependency name, whose values
// reach it at depAddr, to reach it at addr instead.
func throughDep(values map[string]string, name string, depValues map[string]string, depAddr, addr string) {
	host, port, _ := net.SplitHostPort(addr)
	for k, v := range depValues {
		switch k {
		case "port":
			v = port
		case "host":
			v = host
		default:
			v = strings.ReplaceAll(v, depAddr, addr)
		}
		values["dep."+name+"."+k] = v
	}
}

// loadAddr is where the load's requests to service go: through the
// generator's link when the study has one.
func (d *Deployment) loadAddr(service string) string {
	if d.pods != nil {
		return d.pods.loadAddr(service)
	}
	for _, e := range d.links {
		if e.link.From == study.Generator && e.link.To == service {
			return e.proxies[0].Addr()
		}
	}
	return d.instance(service).addr
}

// linkFault injects an event's fault into every proxy of its link, or
// clears it.
func (d *Deployment) linkFault(ev *study.Event) error {
	if d.pods != nil {
		return d.pods.linkFault(ev)
	}
	for _, e := range d.links {
		if e.link.Name() != ev.Target {
			continue
		}
		var errs []error
		for _, p := range e.proxies {
			errs = append(errs, p.SetFault(links.Fault(ev.Fault), ev.Delay))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("no link %s", ev.Target)
}

// stopLinks closes every proxy and its connections.
func (d *Deployment) stopLinks() error {
	var errs []error
	for _, e := range d.links {
		for _, p := range e.proxies {
			errs = append(errs, p.Stop())
		}
	}
	d.links = nil
	return errors.Join(errs...)
}

// linkSettings describes the deployment's links for startup.json.
func (d *Deployment) linkSettings() []results.LinkSetting {
	var out []results.LinkSetting
	for _, e := range d.links {
		out = append(out, results.LinkSetting{
			Name:         e.link.Name(),
			From:         e.link.From,
			To:           e.link.To,
			LatencyMs:    float64(e.spec.Latency.Nanoseconds()) / 1e6,
			JitterMs:     float64(e.spec.Jitter.Nanoseconds()) / 1e6,
			BandwidthBps: e.spec.Bandwidth,
			Listen:       e.addrs(),
			Upstream:     e.real,
		})
	}
	return out
}
