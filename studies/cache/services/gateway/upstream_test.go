package main

import (
	"strings"
	"testing"
)

func TestParseUpstreams(t *testing.T) {
	ups, err := parseUpstreams("127.0.0.1:9001, 127.0.0.1:9002,[::1]:9003")
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, u := range ups {
		addrs = append(addrs, u.addr)
	}
	if got := strings.Join(addrs, " "); got != "127.0.0.1:9001 127.0.0.1:9002 [::1]:9003" {
		t.Errorf("upstreams %s", got)
	}
	for _, bad := range []string{"", " ", "127.0.0.1", "127.0.0.1:9001,", ":9001", "127.0.0.1:http", "127.0.0.1:0", "127.0.0.1:70000"} {
		if _, err := parseUpstreams(bad); err == nil {
			t.Errorf("UPSTREAMS=%q accepted, want an error", bad)
		}
	}
}
