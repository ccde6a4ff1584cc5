package hosts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
)

// TestHostsReachEachOtherAndMsbench starts a web server on each of two
// hosts and checks who reaches whom: msbench's side both, each host the
// other, and no host msbench's own 127.0.0.1, which is not on the bridge.
func TestHostsReachEachOtherAndMsbench(t *testing.T) {
	skipWithoutNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := New(ctx, []string{"edge", "backend"})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			n.Close()
		}
	}()
	if !n.Subnet.Contains(n.Lab) || !n.Lab.IsLoopback() {
		t.Fatalf("lab address %s: want a loopback address in %s", n.Lab, n.Subnet)
	}
	var g proc.Group
	defer g.StopAllAtOnce(2 * time.Second)
	ports := &proc.PortAllocator{}
	servers := map[string]string{}
	for _, h := range n.Hosts {
		if !h.Addr.IsLoopback() || !n.Subnet.Contains(h.Addr) || h.Addr == n.Lab {
			t.Fatalf("host %s has address %s: want its own in %s", h.Name, h.Addr, n.Subnet)
		}
		port, err := ports.Next()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort(h.Addr.String(), strconv.Itoa(port))
		p, err := g.Start(ctx, proc.Spec{Name: h.Name, Path: "python3", Args: []string{"-m", "http.server", "--bind", h.Addr.String(), strconv.Itoa(port)},
			Dir: t.TempDir(), NetNS: h.Path()})
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.WaitReady(ctx, p, proc.HTTPCheck{URL: "http://" + addr + "/", WantStatus: 200}, 20*time.Second); err != nil {
			t.Fatalf("server on %s, reached from msbench's side: %v", h.Name, err)
		}
		if ns(t, p.Pid()) == ns(t, os.Getpid()) {
			t.Fatalf("the server on %s runs in msbench's network namespace", h.Name)
		}
		servers[h.Name] = addr
	}
	if ns(t, n.Hosts[0].pidOf(t, &g)) == ns(t, n.Hosts[1].pidOf(t, &g)) {
		t.Fatal("both hosts share a network namespace")
	}

	// From a host: the other host's server, and msbench's side's.
	lab := httpOn(t, n.Lab.String())
	for _, c := range []struct {
		from, url string
		reach     bool
	}{
		{"edge", "http://" + servers["backend"] + "/", true},
		{"backend", "http://" + servers["edge"] + "/", true},
		{"edge", "http://" + lab + "/", true},
		{"edge", "http://127.0.0.1:" + strings.Split(lab, ":")[1] + "/", false},
	} {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", n.Host(c.from).NetNS, "python3", "-c",
			fmt.Sprintf("import urllib.request; print(urllib.request.urlopen(%q, timeout=3).status)", c.url)).CombinedOutput()
		if reached := err == nil && strings.TrimSpace(string(out)) == "200"; reached != c.reach {
			t.Errorf("from %s, %s: reached=%v, want %v (%v: %s)", c.from, c.url, reached, c.reach, err, out)
		}
	}

	g.StopAllAtOnce(2 * time.Second)
	closed = true
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, n)
}

// TestRefusedWithoutPrivilege runs New as the user nobody, who may not
// make namespaces: the error must say so and leave nothing behind.
func TestRefusedWithoutPrivilege(t *testing.T) {
	if os.Getenv("MSBENCH_HOSTS_AS_NOBODY") == "1" {
		_, err := New(context.Background(), []string{"a"})
		fmt.Printf("ERROR: %v\n", err)
		return
	}
	skipWithoutNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// t.TempDir's parent is private to root.
	dir, err := os.MkdirTemp("", "msbench-hosts-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The test binary in its build directory may be out of nobody's reach.
	bin := filepath.Join(dir, "hosts.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestRefusedWithoutPrivilege$")
	cmd.Env = append(os.Environ(), "MSBENCH_HOSTS_AS_NOBODY=1", "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "ERROR: emulated hosts need network namespaces and a bridge, which this machine refused") {
		t.Fatalf("as nobody, New said:\n%s", out)
	}
	leases, _ := filepath.Glob(filepath.Join(dir, "msbench-lease-*"))
	if len(leases) > 0 {
		t.Fatalf("a refused New left its lease: %v", leases)
	}
}

func TestHostNames(t *testing.T) {
	for _, name := range []string{"", "Edge", "1st", "a b", "a/b", strings.Repeat("a", 40)} {
		if _, err := New(context.Background(), []string{name}); err == nil || !strings.Contains(err.Error(), "host name") {
			t.Errorf("host name %q: got %v, want a refusal of the name", name, err)
		}
	}
}

func skipWithoutNamespaces(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed")
	}
}

// ns is the network namespace a process is in.
func ns(t *testing.T, pid int) string {
	t.Helper()
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		t.Fatal(err)
	}
	return link
}

func (h *Host) pidOf(t *testing.T, g *proc.Group) int {
	t.Helper()
	for _, p := range g.Processes() {
		if p.Name() == h.Name {
			return p.Pid()
		}
	}
	t.Fatalf("no process on host %s", h.Name)
	return 0
}

// httpOn serves on host's address, on a free port, for the test's life.
func httpOn(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func assertGone(t *testing.T, n *Network) {
	t.Helper()
	for _, h := range n.Hosts {
		if _, err := os.Stat(h.Path()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("namespace %s left: %v", h.NetNS, err)
		}
	}
	// The bridge and the cables to the hosts, named after it.
	if left, _ := filepath.Glob(filepath.Join("/sys/class/net", n.Bridge+"*")); len(left) > 0 {
		t.Errorf("interfaces left: %v", left)
	}
	// Only this network's: others of the process may still be up.
	held, _ := lease.Held(os.Getpid())
	for _, it := range held {
		ours := it.Kind == lease.NetDev && strings.HasPrefix(it.Value, n.Bridge)
		for _, h := range n.Hosts {
			ours = ours || it.Kind == lease.NetNS && it.Value == h.NetNS
		}
		if ours {
			t.Errorf("still leased: %v", it)
		}
	}
}

// One process may hold several networks at once (an interleaved run
// deploys every variant of a repetition, each with the study's hosts):
// made together, with the same host names, each has its own bridge,
// namespaces and subnet, and each goes on Close alone.
func TestNetworksOfOneProcessAtOnce(t *testing.T) {
	skipWithoutNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const many = 3
	nets := make([]*Network, many)
	errs := make([]error, many)
	var wg sync.WaitGroup
	for i := range nets {
		wg.Go(func() { nets[i], errs[i] = New(ctx, []string{"edge", "backend"}) })
	}
	wg.Wait()
	for i, n := range nets {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer n.Close()
	}
	bridges, subnets, spaces := map[string]bool{}, map[netip.Prefix]bool{}, map[string]bool{}
	for _, n := range nets {
		if len(n.Bridge) > 15 || !strings.HasPrefix(n.Bridge, BridgePrefix()) {
			t.Errorf("bridge %q: want at most 15 characters, after %s", n.Bridge, BridgePrefix())
		}
		bridges[n.Bridge], subnets[n.Subnet] = true, true
		for _, h := range n.Hosts {
			spaces[h.NetNS] = true
		}
	}
	if len(bridges) != many || len(subnets) != many || len(spaces) != 2*many {
		t.Fatalf("bridges %v, subnets %v, namespaces %v: want each network's own", bridges, subnets, spaces)
	}
	if err := nets[0].Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, nets[0])
	for _, h := range nets[1].Hosts {
		if _, err := os.Stat(h.Path()); err != nil {
			t.Errorf("closing another network took %s: %v", h.NetNS, err)
		}
	}
}
