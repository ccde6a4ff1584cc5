package web

import "testing"

func TestListenAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true,
		"127.0.0.2:80":   true,
		"[::1]:9000":     true,
		"localhost:8080": true,
		"":               false,
		"0.0.0.0:8080":   false,
		":8080":          false,
		"10.0.0.1:8080":  false,
		"127.0.0.1":      false,
		"example.com:80": false,
	} {
		t.Setenv("ADDR", addr)
		got, err := ListenAddr()
		if ok && (err != nil || got != addr) {
			t.Errorf("ADDR=%q: got %q, %v; want it accepted", addr, got, err)
		}
		if !ok && err == nil {
			t.Errorf("ADDR=%q accepted, want an error", addr)
		}
	}
}
