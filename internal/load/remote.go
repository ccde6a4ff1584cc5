package load

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
)

// lookupFunc resolves a host name, as net.Resolver.LookupNetIP does.
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// resolveTarget resolves addr (host:port) to the one address the load
// dials, an IPv4 one when the name has both kinds, as a dialer for tcp4
// would. Unless remote targets are allowed, every address the host names
// must be on this machine: msbench is a lab tool, and a load it sends
// elsewhere (a typo, a name that resolves to a shared or public server)
// would be an attack on whoever answers. The load then dials the address
// checked here, so a name that resolves elsewhere later is never reached.
func resolveTarget(ctx context.Context, addr string, allowRemote bool, lookup lookupFunc) (netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("target address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("target address %q: port %q is not a number from 0 to 65535", addr, portText)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = lookup(ctx, "ip", host); err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: no address", host)
	}
	for i, ip := range ips {
		ips[i] = ip.Unmap()
		if !allowRemote && !ips[i].IsLoopback() {
			where := host
			if where != ips[i].String() {
				where += " (" + ips[i].String() + ")"
			}
			return netip.AddrPort{}, fmt.Errorf("target %s is not on this machine (loopback): msbench loads another machine only when allowed (msbench load --allow-remote)", where)
		}
	}
	if i := slices.IndexFunc(ips, netip.Addr.Is4); i > 0 {
		ips[0] = ips[i]
	}
	return netip.AddrPortFrom(ips[0], uint16(port)), nil
}
