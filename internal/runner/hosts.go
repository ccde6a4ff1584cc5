package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/msbench/msbench/internal/hosts"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/results"
)

// startHosts makes the study's emulated hosts, if it has any, before
// anything is started on them.
func (d *Deployment) startHosts(ctx context.Context, _ map[string]string) error {
	c := d.cfg
	if len(c.study.Hosts) == 0 {
		return nil
	}
	names := make([]string, len(c.study.Hosts))
	for i, h := range c.study.Hosts {
		names[i] = h.Name
	}
	n, err := hosts.New(ctx, names)
	if err != nil {
		return fmt.Errorf("deploy: %w (study %s, hosts:)", err, c.study.File)
	}
	d.network = n
	for i, h := range n.Hosts {
		c.progress("  host %s on %s: %s", h.Name, h.Addr, strings.Join(c.study.Hosts[i].Services, ", "))
	}
	return nil
}

// host is the emulated host service runs on, or nil.
func (d *Deployment) host(c deployConfig, service string) *hosts.Host {
	if d.network == nil {
		return nil
	}
	if h := c.study.HostOf(service); h != nil {
		return d.network.Host(h.Name)
	}
	return nil
}

// listenHost is where msbench's side listens for what services must
// reach: the link proxies and the dependencies' forwarders. On hosts,
// msbench's 127.0.0.1 is not theirs.
func (d *Deployment) listenHost() string {
	if d.network != nil {
		return d.network.Lab.String()
	}
	return "127.0.0.1"
}

// startForwards puts a plain proxy on msbench's side of the hosts'
// bridge in front of every dependency: the dependencies listen on
// msbench's 127.0.0.1, which no host reaches.
func (d *Deployment) startForwards(context.Context, map[string]string) error {
	if d.network == nil {
		return nil
	}
	for _, dep := range d.deps {
		p, err := startProxy(d.cfg, d.listenHost(), "hosts>"+dep.Name, dep.Addr, links.Spec{})
		if err != nil {
			return fmt.Errorf("deploy: forward to %s: %w", dep.Name, err)
		}
		d.forwards = append(d.forwards, p)
	}
	return nil
}

// forward is the forwarder to the dependency at addr, or nil.
func (d *Deployment) forward(addr string) *links.Proxy {
	for _, p := range d.forwards {
		if p.Upstream() == addr {
			return p
		}
	}
	return nil
}

// stopForwards stops the forwarders, once nothing on the hosts uses them.
func (d *Deployment) stopForwards() error {
	var errs []error
	for _, p := range d.forwards {
		errs = append(errs, p.Stop())
	}
	d.forwards = nil
	return errors.Join(errs...)
}

// stopHosts removes the hosts, once nothing runs on them.
func (d *Deployment) stopHosts() error {
	if d.network == nil {
		return nil
	}
	err := d.network.Close()
	d.network = nil
	return err
}

// hostSettings describes the deployment's hosts for startup.json.
func (d *Deployment) hostSettings() []results.HostSetting {
	if d.network == nil {
		return nil
	}
	var out []results.HostSetting
	for _, h := range d.network.Hosts {
		var on []string
		for _, in := range d.instances {
			if !in.dep && in.host == h {
				on = append(on, in.name)
			}
		}
		out = append(out, results.HostSetting{Name: h.Name, Addr: h.Addr.String(), Instances: on})
	}
	return out
}
