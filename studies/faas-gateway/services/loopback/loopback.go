// Package loopback opens TCP listeners that can only be reached from this
// machine. The study's servers take load-test traffic and must never be
// exposed beyond the loopback interface.
package loopback

import (
	"fmt"
	"net"
	"net/netip"
	"os"
)

// PodIPEnv names the variable msbench's cluster backend sets to the pod's
// own address (the downward API's status.podIP): inside a pod, that
// address is what the pod's Service forwards to, and it is reachable only
// within the cluster.
const PodIPEnv = "MSBENCH_POD_IP"

// Listen listens on addr after checking that its host is a loopback address
// ("localhost", 127.0.0.0/8 or ::1), or exactly the pod's own address when
// it runs in one (PodIPEnv). An empty host would mean every interface, so
// it is refused like any other host.
func Listen(addr string) (net.Listener, error) {
	if err := check(addr, os.Getenv(PodIPEnv)); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln, nil
}

// check reports whether addr is a host:port pair on the loopback interface,
// or on podIP when that is set.
func check(addr, podIP string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err == nil && ip.IsLoopback() {
		return nil
	}
	// A pod's address is a unicast one; an unspecified one in the
	// variable would open every interface.
	if pod, perr := netip.ParseAddr(podIP); err == nil && perr == nil && pod.IsGlobalUnicast() && ip == pod {
		return nil
	}
	return fmt.Errorf("address %q: host %q is not a loopback address (nor the pod's own, %s=%q)", addr, host, PodIPEnv, podIP)
}
