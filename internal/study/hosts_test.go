package study

import (
	"strings"
	"testing"
)

var withHosts = strings.Replace(withLinks, "links:\n", "hosts:\n  edge: [gateway]\n  backend: [rpcserver]\nlinks:\n", 1)

func TestParseHosts(t *testing.T) {
	s, err := Parse("net.yaml", []byte(withHosts), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Hosts) != 2 || s.Hosts[0].Name != "edge" || s.Hosts[1].Name != "backend" {
		t.Fatalf("hosts %+v", s.Hosts)
	}
	if h := s.HostOf("rpcserver"); h == nil || h.Name != "backend" {
		t.Fatalf("rpcserver on %+v", h)
	}
	if s.HostOf("db") != nil {
		t.Fatal("a dependency is on a host")
	}
}

func TestHostErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to withHosts
		want    string
	}{
		{"unknown service", [2]string{"backend: [rpcserver]", "backend: [rpc]"}, `net.yaml:17: hosts.backend: no service named "rpc"`},
		{"twice", [2]string{"backend: [rpcserver]", "backend: [rpcserver, gateway]"}, `net.yaml:17: hosts.backend: service "gateway" is already on host edge`},
		{"left out", [2]string{"  backend: [rpcserver]\n", ""}, `net.yaml:16: hosts: service "rpcserver" is on no host`},
		{"empty", [2]string{"backend: [rpcserver]", "backend: []"}, `net.yaml:17: hosts.backend: a host runs at least one service`},
		{"bad name", [2]string{"backend: [rpcserver]", "Back_end: [rpcserver]"}, `net.yaml:17: hosts.Back_end: a host's name is lower-case letters`},
		{"a dependency", [2]string{"backend: [rpcserver]", "backend: [rpcserver, db]"}, `hosts.backend: no service named "db"`},
		{"not a mapping", [2]string{"hosts:\n  edge: [gateway]\n  backend: [rpcserver]\n", "hosts: [gateway]\n"}, `net.yaml:15: hosts: want a mapping`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(withHosts, tc.replace[0]) {
				t.Fatalf("%q not in the study", tc.replace[0])
			}
			src := strings.Replace(withHosts, tc.replace[0], tc.replace[1], 1)
			_, err := Parse("net.yaml", []byte(src), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
