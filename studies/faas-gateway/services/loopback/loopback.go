// Package loopback opens TCP listeners that can only be reached from this
// machine. The study's servers take load-test traffic and must never be
// exposed beyond the loopback interface.
package loopback

import (
	"fmt"
	"net"
	"net/netip"
)

// Listen listens on addr after checking that its host is a loopback address
// ("localhost", 127.0.0.0/8 or ::1). An empty host would mean every
// interface, so it is refused like any other non-loopback host.
func Listen(addr string) (net.Listener, error) {
	if err := check(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln, nil
}

// check reports whether addr is a host:port pair on the loopback interface.
func check(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q: host %q is not a loopback address", addr, host)
	}
	return nil
}
