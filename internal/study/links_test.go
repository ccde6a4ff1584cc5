package study

import (
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/links"
)

const withLinks = `study: net
dependencies:
  db: {kind: postgres}
services:
  rpcserver:
    command: "sleep 100"
    ready: {tcp: "{addr}"}
  gateway:
    command: "gw --rpc {service.rpcserver.addr}"
    env: {DB: "{dep.db.url}"}
    ready: {tcp: "{addr}"}
variants:
  delay: [0ms, 0.5ms, 2ms]
aa: none
links:
  - {from: gateway, to: rpcserver, latency: "{delay}", jitter: 0.1ms, bandwidth: 1Gbps}
  - {from: gateway, to: db, latency: 1ms}
  - {from: generator, to: gateway}
load:
  service: gateway
  steps:
    - name: s
      requests: 10
      events:
        - {at: 3s, link: gateway>rpcserver, fault: reset}
        - {at: 4s, link: gateway>db, fault: slow_close, delay: 2s}
        - {at: 6s, link: gateway>rpcserver, fault: none}
      targets: [{path: /}]
`

func TestParseLinks(t *testing.T) {
	s, err := Parse("net.yaml", []byte(withLinks), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Links) != 3 || s.Link("gateway>rpcserver") == nil || s.Link("generator>gateway") == nil || s.Link("rpcserver>gateway") != nil {
		t.Fatalf("links %+v", s.Links)
	}
	want := map[string]links.Spec{
		"0ms":   {Jitter: 100 * time.Microsecond, Bandwidth: 1e9},
		"0.5ms": {Latency: 500 * time.Microsecond, Jitter: 100 * time.Microsecond, Bandwidth: 1e9},
		"2ms":   {Latency: 2 * time.Millisecond, Jitter: 100 * time.Microsecond, Bandwidth: 1e9},
	}
	for _, v := range s.Matrix() {
		got, err := s.Link("gateway>rpcserver").Spec(s.Placeholders(v))
		if err != nil || got != want[v.Key()] {
			t.Errorf("variant %s: %+v, %v, want %+v", v.Key(), got, err, want[v.Key()])
		}
	}
	if got, err := s.Link("gateway>db").Spec(nil); err != nil || got != (links.Spec{Latency: time.Millisecond}) {
		t.Errorf("gateway>db: %+v, %v", got, err)
	}
	if got, err := s.Link("generator>gateway").Spec(nil); err != nil || got != (links.Spec{}) {
		t.Errorf("generator>gateway: %+v, %v", got, err)
	}
	evs := s.Load.Steps[0].Events
	if evs[0].Action != "link" || evs[0].Target != "gateway>rpcserver" || evs[0].Fault != "reset" || evs[1].Delay != 2*time.Second || evs[2].Fault != "none" {
		t.Fatalf("events %+v %+v %+v", evs[0], evs[1], evs[2])
	}
}

func TestLinkErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to withLinks
		want    string
	}{
		{"unknown from", [2]string{"{from: gateway, to: rpcserver", "{from: gw, to: rpcserver"}, `net.yaml:16: links[0].from: no service named "gw" (or generator`},
		{"unknown to", [2]string{"{from: gateway, to: db", "{from: gateway, to: pg"}, `net.yaml:17: links[1].to: no service or dependency named "pg"`},
		{"to itself", [2]string{"{from: gateway, to: db", "{from: gateway, to: gateway"}, "net.yaml:17: links[1]: a link from gateway to itself"},
		{"duplicate", [2]string{"{from: gateway, to: db, latency: 1ms}", "{from: gateway, to: rpcserver}"}, "net.yaml:17: links[1]: link gateway>rpcserver given twice"},
		{"bad latency", [2]string{"latency: 1ms}", "latency: 1 ms}"}, `net.yaml:17: links[1].latency: want a duration such as 0.5ms or 2ms, got "1 ms"`},
		{"negative latency", [2]string{"latency: 1ms}", "latency: -1ms}"}, `net.yaml:17: links[1].latency: want a duration of at least 0`},
		{"bad bandwidth", [2]string{"bandwidth: 1Gbps", "bandwidth: 1GB"}, `net.yaml:16: links[0].bandwidth: want a bandwidth such as 10Mbps`},
		{"bad axis value", [2]string{"[0ms, 0.5ms, 2ms]", "[0ms, far, 2ms]"}, `net.yaml:16: links[0]: latency: want a duration such as 0.5ms or 2ms, got "far" (variants far)`},
		{"not an axis", [2]string{`latency: "{delay}"`, `latency: "{service.gateway.port}"`}, `links[0]: latency: "{service.gateway.port}": no value for {service.gateway.port} (variants 0ms, 0.5ms, 2ms)`},
		{"unknown link field", [2]string{"jitter: 0.1ms", "jiter: 0.1ms"}, "net.yaml:16: links[0].jiter: unknown field"},
		{"no to", [2]string{"{from: generator, to: gateway}", "{from: generator}"}, "net.yaml:18: links[2]: a link needs from and to"},
		{"generator elsewhere", [2]string{"{from: generator, to: gateway}", "{from: generator, to: rpcserver}"}, `links[2].to: from generator, a link goes to the load's service "gateway", not "rpcserver"`},
		{"unknown link event", [2]string{"link: gateway>rpcserver, fault: reset", "link: gateway>rpc, fault: reset"}, `net.yaml:25: load.steps[0]: event link: no link "gateway>rpc" (a link is named FROM>TO; declared: gateway>db, gateway>rpcserver, generator>gateway)`},
		{"unknown fault", [2]string{"fault: reset", "fault: explode"}, `load.steps[0].events[0].fault: "explode" is not one of none, reset, timeout, slow_close`},
		{"no fault", [2]string{", fault: none}", "}"}, "net.yaml:27: load.steps[0].events[2].fault: missing: a link event needs a fault"},
		{"fault on a kill", [2]string{"link: gateway>rpcserver, fault: none", "kill: gateway, fault: none"}, "net.yaml:27: load.steps[0].events[2]: fault and delay are for link events"},
		{"delay on a reset", [2]string{"fault: reset}", "fault: reset, delay: 1s}"}, "net.yaml:25: load.steps[0].events[0].delay: a delay is for fault slow_close"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(withLinks, tc.replace[0]) {
				t.Fatalf("%q not in the study", tc.replace[0])
			}
			src := strings.Replace(withLinks, tc.replace[0], tc.replace[1], 1)
			_, err := Parse("net.yaml", []byte(src), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
