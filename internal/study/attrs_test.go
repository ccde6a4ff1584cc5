package study

import (
	"maps"
	"strings"
	"testing"
)

func TestExpandAttrs(t *testing.T) {
	s := &Study{Variants: []Axis{{Name: "impl", Values: []string{"a", "b"}, Attrs: map[string]map[string]string{
		"a": {"peer": "http://{service.rpc.addr}/", "cmd": "{build.a}/run"},
		"b": {"peer": "{service.missing.addr}"},
	}}}}
	a, b := s.Matrix()[0], s.Matrix()[1]
	values := map[string]string{"service.rpc.addr": "127.0.0.1:1001", "build.a": "/cache/a"}
	if err := s.ExpandAttrs(a, values); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"impl": "a", "impl.peer": "http://127.0.0.1:1001/", "impl.cmd": "/cache/a/run"} {
		if values[k] != want {
			t.Errorf("%s = %q, want %q", k, values[k], want)
		}
	}
	// Expanded again with a dialer's own address, an attribute follows it.
	own := maps.Clone(values)
	own["service.rpc.addr"] = "127.0.0.1:2002"
	if err := s.ExpandAttrs(a, own); err != nil || own["impl.peer"] != "http://127.0.0.1:2002/" {
		t.Errorf("with the dialer's address: peer %q, %v", own["impl.peer"], err)
	}
	err := s.ExpandAttrs(b, map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "impl.peer") || !strings.Contains(err.Error(), "service.missing.addr") {
		t.Errorf("an attribute naming what nothing provides: %v, want an error naming the value and the placeholder", err)
	}
}

func TestSetServiceAddrs(t *testing.T) {
	for _, c := range []struct {
		addrs           []string
		addr, all, port string
	}{
		{[]string{"127.0.0.1:1001"}, "127.0.0.1:1001", "127.0.0.1:1001", "1001"},
		{[]string{"10.96.0.10:8080", "10.96.0.11:8080"}, "10.96.0.10:8080", "10.96.0.10:8080,10.96.0.11:8080", "8080"},
		{[]string{"[::1]:7000"}, "[::1]:7000", "[::1]:7000", "7000"},
	} {
		values := map[string]string{}
		SetServiceAddrs(values, "rpc", c.addrs)
		if values["service.rpc.addr"] != c.addr || values["service.rpc.addrs"] != c.all || values["service.rpc.port"] != c.port || len(values) != 3 {
			t.Errorf("SetServiceAddrs(%v) = %v, want addr %s, addrs %s, port %s", c.addrs, values, c.addr, c.all, c.port)
		}
	}
}
