package runner

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// The front reaches its backend through a link whose latency is the
// variant's: its Server-Timing (the time of its call to the backend) grows
// by twice the latency, and the generator's own link adds twice its
// latency to what the load measures.
func TestLinksDelayAndFault(t *testing.T) {
	dir, log, err := runStudy(t, "testdata/links.yaml", "", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, _ := results.Open(dir)
	// The fastest call is read for what the link adds: a busy machine
	// makes calls late, never early, in either variant; the medians of
	// two variants drift apart both ways with the host's steal.
	handler, fastest := map[string]float64{}, map[string]float64{}
	for _, v := range []string{"0ms", "5ms"} {
		s, err := r.StepDir(1, v, "steady").ReadSummary()
		if err != nil {
			t.Fatal(err)
		}
		if s.Successes != 100 {
			t.Fatalf("%s: %d of 100 ok: %v", v, s.Successes, s.Errors)
		}
		handler[v], fastest[v] = s.ServerTiming["handler"].P50, s.ServerTiming["handler"].Min
		// The generator's link: 1 ms each way, around the front's own time.
		outside := s.Latency.P50 - handler[v]
		t.Logf("delay %s: front's call to the backend p50 %.3f ms; load latency p50 %.3f ms (%.3f ms outside the front)", v, handler[v], s.Latency.P50, outside)
		// Only a lower bound: the generator shares its core with the
		// proxies, and a busy machine adds to it, never takes away.
		if outside < 1.9 {
			t.Errorf("%s: %.3f ms outside the front, want at least 2 (the generator's link, 1 ms each way)", v, outside)
		}
		st, err := r.VariantDir(1, v).ReadStartup()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Links) != 2 || st.Links[0].Name != "front>backend" || st.Links[1].BandwidthBps != 1e9 || st.Links[1].JitterMs != 0.1 {
			t.Fatalf("%s: links in startup.json %+v", v, st.Links)
		}
		if want := map[string]float64{"0ms": 0, "5ms": 5}[v]; st.Links[0].LatencyMs != want || st.Links[0].Listen[0] == st.Links[0].Upstream[0] {
			t.Fatalf("%s: link %+v", v, st.Links[0])
		}
		assertClosed(t, st.Links)
	}
	// A call through a 5 ms link crosses it twice, so none can be faster
	// than 10 ms, however idle or busy the machine (the link's own jitter
	// is 0). What the link adds over the 0 ms variant is only logged: a
	// busy machine delays the fastest call of either variant by tens of
	// ms (CI saw the difference at 9.3 and at 27.8 ms), so it decides
	// nothing; internal/links holds the delay itself to 10 ms ± 1 ms.
	t.Logf("a 5 ms link added %.3f ms to the front's fastest call (10 on an idle machine)", fastest["5ms"]-fastest["0ms"])
	// The proxies run in msbench beside the load loop, which waits for
	// answers in a system call that keeps its Go P: with as many Ps as
	// the generator's one core, a proxy forwarded only at the loop's
	// wakes, and a call through the 0 ms link took 10–40 ms (p50 30.7).
	// A busy machine makes the fastest of 100 late by a few ms at most.
	if fastest["0ms"] > 5 {
		t.Errorf("the front's fastest call through a 0 ms link took %.3f ms: the link's proxy waits for the load loop", fastest["0ms"])
	}
	if fastest["5ms"] < 10 {
		t.Errorf("the front's fastest call through a 5 ms link took %.3f ms, under the 10 of crossing it twice", fastest["5ms"])
	}
	// The reset between 300 and 800 ms failed the front's calls; the
	// clear let them succeed again.
	evs, err := r.StepDir(1, "5ms", "faults").ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Action != "link" || evs[0].Target != "front>backend" || evs[0].Fault != "reset" || evs[1].Fault != "none" {
		t.Fatalf("events %+v", evs)
	}
	for _, ev := range evs {
		if ev.Error != "" {
			t.Errorf("event %+v", ev)
		}
	}
	rows, err := r.StepDir(1, "5ms", "faults").ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	// By when each request left, which a busy machine may make later
	// than its slot, with margins: the load's clock starts a little after
	// the events'.
	var during, after, failedDuring, failedAfter int
	start := rows[0].Intended
	for _, row := range rows {
		start = min(start, row.Intended)
	}
	for _, row := range rows {
		switch at := float64(row.Sent-start) / 1e9; {
		case at > 0.35 && at < 0.7:
			during++
			if row.Status != 200 {
				failedDuring++
			}
		case at > 0.95:
			after++
			if row.Status != 200 {
				failedAfter++
			}
		}
	}
	t.Logf("%d of %d requests failed during the reset, %d of %d after it cleared", failedDuring, during, failedAfter, after)
	if during == 0 || failedDuring < during*9/10 || after == 0 || failedAfter > 0 {
		t.Errorf("%d of %d failed during the reset, %d of %d after it cleared", failedDuring, during, failedAfter, after)
	}
	if !strings.Contains(log, "link front>backend (latency 5ms)") {
		t.Errorf("no link in the log:\n%s", log)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

// assertClosed checks that no proxy of links still listens.
func assertClosed(t *testing.T, links []results.LinkSetting) {
	t.Helper()
	for _, l := range links {
		for _, addr := range l.Listen {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("link %s still listens on %s after the run", l.Name, addr)
			}
		}
	}
}

// Ctrl-C stops the links with the services.
func TestLinksStopOnInterrupt(t *testing.T) {
	s, err := study.Load("testdata/links.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	dir, err := Run(ctx, s, testOptions(t, &cancelAfter{w: &log, marker: "steady [1/2]: ", cancel: cancel}))
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v\n%s", err, log.String())
	}
	r, _ := results.Open(dir)
	ran := 0
	for _, v := range []string{"0ms", "5ms"} {
		if st, err := r.VariantDir(1, v).ReadStartup(); err == nil && st != nil {
			ran++
			assertClosed(t, st.Links)
		}
	}
	if ran != 1 {
		t.Fatalf("%d variants started, want 1", ran)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running after interrupt: %v", left)
	}
}

// A service at the far end of a link sees the proxy's address in every
// placeholder naming the near end, and only that service does.
func TestLinkValues(t *testing.T) {
	s, err := study.Parse("v.yaml", []byte(`study: v
dependencies:
  db: {kind: postgres}
services:
  rpc: {command: "x {service.other.addr}", replicas: 2, ready: {tcp: "{addr}"}}
  gateway: {command: "{impl.cmd}", ready: {tcp: "{addr}"}}
  other: {command: "x {service.rpc.addr}", ready: {tcp: "{addr}"}}
variants:
  impl: {a: {cmd: "gw {service.rpc.addrs} {dep.db.port}"}}
aa: none
links:
  - {from: gateway, to: rpc, latency: 1ms}
  - {from: gateway, to: db}
load: {service: gateway, steps: [{name: s, requests: 1, targets: [{path: /}]}]}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployment{deps: []*deps.Instance{{Name: "db", Addr: "127.0.0.1:5432", Values: map[string]string{
		"addr": "127.0.0.1:5432", "host": "127.0.0.1", "port": "5432", "password": "pw",
		"url": "postgres://msbench:pw@127.0.0.1:5432/msbench?sslmode=disable",
	}}}}
	c := deployConfig{study: s, variant: s.Matrix()[0], ports: &proc.PortAllocator{}, progress: t.Logf}
	d.cfg = c
	d.addrs = map[string][]string{"rpc": {"127.0.0.1:1001", "127.0.0.1:1002"}}
	values := map[string]string{
		"service.rpc.addr": "127.0.0.1:1001", "service.rpc.addrs": "127.0.0.1:1001,127.0.0.1:1002", "service.rpc.port": "1001",
		"impl": "a", "impl.cmd": "gw 127.0.0.1:1001,127.0.0.1:1002 5432",
	}
	for k, v := range d.deps[0].Values {
		values["dep.db."+k] = v
	}
	if err := d.startLinks(context.Background(), values); err != nil {
		t.Fatal(err)
	}
	defer d.stopLinks()
	rpc, db := d.links[0].addrs(), d.links[1].addrs()
	if len(rpc) != 2 || len(db) != 1 {
		t.Fatalf("proxies %v %v", rpc, db)
	}
	gw, err := d.linkValues(c, "gateway", values)
	if err != nil {
		t.Fatal(err)
	}
	_, dbPort, _ := strings.Cut(db[0], ":")
	_, rpcPort, _ := strings.Cut(rpc[0], ":")
	want := map[string]string{
		"service.rpc.addr":  rpc[0],
		"service.rpc.addrs": rpc[0] + "," + rpc[1],
		"service.rpc.port":  rpcPort,
		"dep.db.addr":       db[0],
		"dep.db.port":       dbPort,
		"dep.db.host":       "127.0.0.1",
		"dep.db.password":   "pw",
		"dep.db.url":        "postgres://msbench:pw@" + db[0] + "/msbench?sslmode=disable",
		"impl.cmd":          "gw " + rpc[0] + "," + rpc[1] + " " + dbPort,
	}
	for k, v := range want {
		if gw[k] != v {
			t.Errorf("gateway sees %s = %q, want %q", k, gw[k], v)
		}
	}
	if other, err := d.linkValues(c, "other", values); err != nil || other["service.rpc.addr"] != "127.0.0.1:1001" || other["dep.db.url"] != values["dep.db.url"] {
		t.Errorf("a service without a link sees %q, %q (%v)", other["service.rpc.addr"], other["dep.db.url"], err)
	}
	if values["service.rpc.addr"] != "127.0.0.1:1001" {
		t.Error("the shared values changed")
	}
}
