package runner

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/hosts"
	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/results"
)

// Two services on hosts of their own, the front calling the backend over a
// link and the backend reaching a dependency on msbench's side: every
// request succeeds, each host has its own address, the link's delay is in
// the front's call, and nothing of the hosts is left afterwards.
func TestHosts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("emulated hosts need root")
	}
	dir, log, err := runStudy(t, "testdata/hosts.yaml", "", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, _ := results.Open(dir)
	s, err := r.StepDir(1, "default", "steady").ReadSummary()
	if err != nil {
		t.Fatal(err)
	}
	if s.Successes != 50 {
		t.Fatalf("%d of 50 ok: %v", s.Successes, s.Errors)
	}
	// 2 ms each way between the hosts; a busy machine adds, never takes.
	if call := s.ServerTiming["handler"].P50; call < 3.9 {
		t.Errorf("the front's call to the backend took %.3f ms at the median, want at least 4 (a 2 ms link)", call)
	}
	res, err := r.StepDir(1, "default", "steady").ReadResources()
	if err != nil {
		t.Fatal(err)
	}
	var accounted []string
	for _, u := range res.Services {
		accounted = append(accounted, u.Name)
	}
	for _, want := range []string{"broker", "broker-epmd", "cache", "front", "backend"} {
		if !slices.Contains(accounted, want) {
			t.Errorf("%s is not accounted: %v", want, accounted)
		}
	}
	st, err := r.VariantDir(1, "default").ReadStartup()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Hosts) != 2 || st.Hosts[0].Name != "edge" || st.Hosts[1].Name != "back" ||
		len(st.Hosts[0].Instances) != 1 || st.Hosts[0].Instances[0] != "front" {
		t.Fatalf("hosts in startup.json: %+v", st.Hosts)
	}
	lab := netip.MustParseAddr(st.LabAddr)
	seen := map[netip.Addr]bool{lab: true}
	for _, h := range st.Hosts {
		a := netip.MustParseAddr(h.Addr)
		if !a.IsLoopback() || a == netip.MustParseAddr("127.0.0.1") || seen[a] {
			t.Errorf("host %s has address %s: want a loopback address of its own", h.Name, a)
		}
		seen[a] = true
	}
	if len(st.Links) != 1 || netip.MustParseAddrPort(st.Links[0].Listen[0]).Addr() != lab {
		t.Errorf("the link's proxy must listen on msbench's side of the bridge %s: %+v", lab, st.Links)
	}
	assertClosed(t, st.Links)
	html, err := report.Write(dir, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(html)
	for _, want := range []string{"Emulated hosts", st.Hosts[1].Addr, "backend"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report does not show %q", want)
		}
	}
	if left, _ := filepath.Glob("/run/netns/msbench-" + strconv.Itoa(os.Getpid()) + "-*"); len(left) > 0 {
		t.Errorf("namespaces left: %v", left)
	}
	if left, _ := filepath.Glob("/sys/class/net/" + hosts.BridgePrefix() + "*"); len(left) > 0 {
		t.Errorf("interfaces left: %v", left)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}
