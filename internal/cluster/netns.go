package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

const netnsDir = "/run/netns"

func netnsPath(name string) string { return netnsDir + "/" + name }

// run runs a command to its end, its output in the error when it fails.
func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, args, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// createNetwork makes the cluster's namespace and the node's "NIC": a
// veth pair with both ends inside it, the node address on one. Nothing
// links the namespace to the machine's, and there is no default route: a
// packet for any other address fails at once inside the namespace.
//
// A ClusterIP needs a route for the socket to be made at all, before
// kube-proxy's rules rewrite it to a pod's address: the Services' range
// goes to the node's NIC (the pods' bridge exists only once a pod does).
// A pod reaching another pod on the bridge through a ClusterIP gets the
// answer bridged, not routed: only br_netfilter's bridge-nf-call-iptables
// (the namespace's own) puts it through conntrack, which gives it the
// ClusterIP's address back.
func createNetwork(ctx context.Context, ns string) error {
	ip := func(args ...string) error {
		return run(ctx, "ip", append([]string{"-n", ns}, args...)...)
	}
	if err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "node0", "type", "veth", "peer", "name", "node1"},
		{"addr", "add", nodeIP + "/" + strconv.Itoa(nodePrefix), "dev", "node0"},
		{"link", "set", "node0", "up"},
		{"link", "set", "node1", "up"},
		{"route", "add", serviceCIDR, "dev", "node0"},
	} {
		if err := ip(args...); err != nil {
			return fmt.Errorf("cluster network: %w", err)
		}
	}
	return inNetns(ns, func() error {
		if err := os.WriteFile(bridgeCallsIPTables, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("cluster network: %w", err)
		}
		return nil
	})
}

// bridgeCallsIPTables is br_netfilter's switch, which this kernel keeps
// per network namespace.
const bridgeCallsIPTables = "/proc/sys/net/bridge/bridge-nf-call-iptables"

// dialIn dials addr from inside the namespace ns.
func dialIn(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(ns, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// inNetns runs f on a thread switched into the namespace ns: a socket
// made there, or a /proc/sys/net file opened there, keeps to that
// namespace afterwards.
func inNetns(ns string, f func() error) error {
	done := make(chan error, 1)
	go func() {
		// The thread stays locked and ends with this goroutine, so no
		// other goroutine ever runs in the cluster's namespace.
		runtime.LockOSThread()
		nsf, err := os.Open(netnsPath(ns))
		if err != nil {
			done <- fmt.Errorf("cluster namespace: %w", err)
			return
		}
		defer nsf.Close()
		if err := unix.Setns(int(nsf.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		done <- f()
	}()
	return <-done
}

// netnsInode is the identity of the namespace a process is in or a
// namespace file names.
func netnsInode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
