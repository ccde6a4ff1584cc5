// Package hosts emulates separate machines on this one: each host is a
// network namespace of its own, with its own address in a loopback-range
// subnet, and a bridge in msbench's namespace joins them to each other and
// to msbench's side (the generator, the link proxies and the forwarders to
// the dependencies), which has the subnet's first address.
//
// The addresses stay in 127.0.0.0/8, so nothing is reachable from outside
// the machine: the kernel treats them as martians on a real interface
// unless route_localnet is set, which is set on the bridge and the veth
// ends only. Each side's local routing table already holds 127.0.0.0/8 as
// its own, so a more specific route for the subnet is added to it.
package hosts

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msbench/msbench/internal/lease"
)

// Host is one emulated machine.
type Host struct {
	Name  string
	NetNS string     // the namespace's name, under /run/netns
	Addr  netip.Addr // what its services listen on
	veth  string     // msbench's end of the host's cable to the bridge
}

// Path is the namespace's file, which a process enters to run on the host.
func (h *Host) Path() string { return filepath.Join(lease.NetNSDir, h.NetNS) }

// Network is a set of hosts joined by a bridge.
type Network struct {
	Bridge string
	Subnet netip.Prefix
	// Lab is msbench's own address on the bridge: what the hosts reach
	// msbench's side through.
	Lab   netip.Addr
	Hosts []*Host
}

// Host returns the host called name, or nil.
func (n *Network) Host(name string) *Host {
	for _, h := range n.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// subnetBase is the first of the /24 subnets hosts are given; the third
// octet tells networks of different msbench processes apart.
var subnetBase = netip.AddrFrom4([4]byte{127, 201, 0, 0})

// NamePattern is what a host's name may be: usable in a namespace's name.
var NamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// commandTimeout bounds each ip command.
const commandTimeout = 10 * time.Second

// New makes one namespace per name, joined by a bridge. It needs root (or
// CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's ip; where either is
// missing it says so. Everything it makes is leased until Close, so a
// hard death leaves nothing for longer than the next msbench's sweep.
func New(ctx context.Context, names []string) (n *Network, err error) {
	if len(names) > 250 {
		return nil, fmt.Errorf("emulated hosts: %d hosts do not fit a /24 subnet", len(names))
	}
	for _, name := range names {
		if !NamePattern.MatchString(name) {
			return nil, fmt.Errorf("emulated hosts: host name %q: want lower-case letters, digits and dashes, starting with a letter", name)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("emulated hosts need iproute2's ip command, which is not installed (apt-get install iproute2)")
	}
	pid := os.Getpid()
	seq := networks.Add(1)
	// A subnet is free until its bridge has an address in it: the
	// networks of one process (an interleaved run's deployments) choose
	// theirs one at a time.
	claiming.Lock()
	subnet, err := freeSubnet(ctx, pid)
	if err != nil {
		claiming.Unlock()
		return nil, err
	}
	first := subnet.Addr().Next()
	n = &Network{Bridge: BridgePrefix() + strconv.FormatInt(seq, 36), Subnet: subnet, Lab: first}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
			n = nil
		}
	}()
	lease.Take(lease.NetDev, n.Bridge)
	err = ip(ctx, "", "link", "add", n.Bridge, "type", "bridge")
	if err != nil {
		claiming.Unlock()
		return n, refusal(err)
	}
	err = joinSide(ctx, "", n.Bridge, first, subnet)
	claiming.Unlock()
	if err != nil {
		return n, err
	}
	addr := first
	for i, name := range names {
		addr = addr.Next()
		h := &Host{Name: name, NetNS: fmt.Sprintf("msbench-%d-%d-%s", pid, seq, name), Addr: addr}
		lease.Take(lease.NetNS, h.NetNS)
		n.Hosts = append(n.Hosts, h)
		if err := ip(ctx, "", "netns", "add", h.NetNS); err != nil {
			return n, refusal(err)
		}
		// The host's end is created in its namespace under a fixed name,
		// so no name of msbench's namespace is taken by it.
		veth := n.Bridge + "v" + strconv.FormatInt(int64(i), 36)
		lease.Take(lease.NetDev, veth)
		h.veth = veth
		if err := ip(ctx, "", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", h.NetNS); err != nil {
			return n, err
		}
		if err := ip(ctx, "", "link", "set", veth, "master", n.Bridge, "up"); err != nil {
			return n, err
		}
		if err := localnet(ctx, "", veth); err != nil {
			return n, err
		}
		if err := ip(ctx, h.NetNS, "link", "set", "lo", "up"); err != nil {
			return n, err
		}
		if err := joinSide(ctx, h.NetNS, "eth0", addr, subnet); err != nil {
			return n, err
		}
	}
	return n, nil
}

// joinSide gives dev the address in subnet and routes the subnet through
// it, in the namespace ns ("" for msbench's own).
func joinSide(ctx context.Context, ns, dev string, addr netip.Addr, subnet netip.Prefix) error {
	if err := ip(ctx, ns, "addr", "add", addr.String()+"/"+strconv.Itoa(subnet.Bits()), "dev", dev); err != nil {
		return err
	}
	if err := ip(ctx, ns, "link", "set", dev, "up"); err != nil {
		return err
	}
	if err := localnet(ctx, ns, dev); err != nil {
		return err
	}
	// More specific than the local table's 127.0.0.0/8, which would
	// otherwise deliver every 127.x address to this namespace itself.
	return ip(ctx, ns, "route", "add", subnet.String(), "dev", dev, "table", "local", "src", addr.String())
}

// localnet lets dev carry loopback-range addresses.
func localnet(ctx context.Context, ns, dev string) error {
	file := "/proc/sys/net/ipv4/conf/" + dev + "/route_localnet"
	if ns == "" {
		if err := os.WriteFile(file, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("emulated hosts: %w", err)
		}
		return nil
	}
	// /proc/sys/net shows the namespace of the process that reads it.
	return run(ctx, "netns", "exec", ns, "sh", "-c", "echo 1 > "+file)
}

// ip runs an iproute2 command, in the namespace ns unless it is "".
func ip(ctx context.Context, ns string, args ...string) error {
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	return run(ctx, args...)
}

func run(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// refusal explains a namespace or bridge the machine would not make.
func refusal(err error) error {
	return fmt.Errorf("emulated hosts need network namespaces and a bridge, which this machine refused (run msbench as root, or with CAP_SYS_ADMIN and CAP_NET_ADMIN, outside a container that forbids them): %w", err)
}

var (
	// networks numbers the networks of this process, which may hold
	// several at once.
	networks atomic.Int64
	claiming sync.Mutex
)

// BridgePrefix begins the name of every bridge and cable this process
// makes: "msb", its pid in base 36, "n", then the network's number and,
// for a cable, "v" and the host's; at most 15 characters, Linux's limit,
// for any pid and up to 1,295 networks of 250 hosts.
func BridgePrefix() string { return "msb" + strconv.FormatInt(int64(os.Getpid()), 36) + "n" }

// freeSubnet picks a /24 of 127.201.0.0/16 that no interface of msbench's
// namespace has an address in, starting from one derived from pid so that
// concurrent msbench processes rarely try the same one.
func freeSubnet(ctx context.Context, pid int) (netip.Prefix, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("emulated hosts: list addresses: %w", err)
	}
	used := string(out)
	base := subnetBase.As4()
	for i := range 254 {
		b := base
		b[2] = byte((pid+i)%254 + 1)
		p := netip.PrefixFrom(netip.AddrFrom4(b), 24)
		if !strings.Contains(used, fmt.Sprintf(" %d.%d.%d.", b[0], b[1], b[2])) {
			return p, nil
		}
	}
	return netip.Prefix{}, errors.New("emulated hosts: every /24 of 127.201.0.0/16 is in use")
}

// Close removes the hosts' cables, namespaces and the bridge. A
// namespace outlives its name while anything holds it: its processes,
// which the caller stops first, and the kernel's sockets of connections
// that were still closing, which may retry for minutes. So each cable is
// cut explicitly (a veth pair goes with either end), leaving such a
// namespace nothing that shows in msbench's.
func (n *Network) Close() error {
	var errs []error
	release := func(kind lease.Kind, name string, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		lease.Release(kind, name)
	}
	for _, h := range n.Hosts {
		if h.veth != "" {
			release(lease.NetDev, h.veth, lease.RemoveNetDev(h.veth))
		}
		release(lease.NetNS, h.NetNS, lease.RemoveNetNS(h.NetNS))
	}
	release(lease.NetDev, n.Bridge, lease.RemoveNetDev(n.Bridge))
	return errors.Join(errs...)
}
