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
	} {
		if err := ip(args...); err != nil {
			return fmt.Errorf("cluster network: %w", err)
		}
	}
	return nil
}

// dialIn dials addr from inside the namespace ns: the socket is made on a
// thread switched into it, and keeps to that namespace afterwards.
func dialIn(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// The thread stays locked and ends with this goroutine, so no
		// other goroutine ever runs in the cluster's namespace.
		runtime.LockOSThread()
		f, err := os.Open(netnsPath(ns))
		if err != nil {
			done <- result{err: fmt.Errorf("cluster namespace: %w", err)}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("enter namespace %s: %w", ns, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		done <- result{c, err}
	}()
	r := <-done
	return r.conn, r.err
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
