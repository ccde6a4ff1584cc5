package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, podIP string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"127.0.0.2:80", "", true},
		{"[::1]:9000", "", true},
		{"localhost:8080", "", true},
		{"", "", false},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"10.0.0.1:8080", "", false},
		{"127.0.0.1", "", false},
		{"example.com:80", "", false},
		// In a pod: its own address, and nothing else but loopback.
		{"10.244.0.7:8080", "10.244.0.7", true},
		{"127.0.0.1:8080", "10.244.0.7", true},
		{"10.244.0.8:8080", "10.244.0.7", false},
		{":8080", "10.244.0.7", false},
		{"0.0.0.0:8080", "0.0.0.0", false},
		{"[::]:8080", "::", false},
		{"example.com:80", "example.com", false},
	} {
		t.Setenv("ADDR", tc.addr)
		t.Setenv(PodIPEnv, tc.podIP)
		got, err := ListenAddr()
		if tc.ok && (err != nil || got != tc.addr) {
			t.Errorf("ADDR=%q pod %q: got %q, %v; want it accepted", tc.addr, tc.podIP, got, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("ADDR=%q pod %q accepted, want an error", tc.addr, tc.podIP)
		}
	}
}

func TestNewServerTimeouts(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	srv, err := newServer("127.0.0.1:1", http.NotFoundHandler(), getenv)
	if err != nil || srv.ReadHeaderTimeout != 5*time.Second || srv.ReadTimeout != 10*time.Second ||
		srv.IdleTimeout != 120*time.Second || srv.MaxHeaderBytes != maxHeaderBytes {
		t.Errorf("defaults: %+v, %v", srv, err)
	}
	env = map[string]string{"READ_HEADER_TIMEOUT": "1s", "READ_TIMEOUT": "2s", "IDLE_TIMEOUT": "3s"}
	srv, err = newServer("127.0.0.1:1", http.NotFoundHandler(), getenv)
	if err != nil || srv.ReadHeaderTimeout != time.Second || srv.ReadTimeout != 2*time.Second || srv.IdleTimeout != 3*time.Second {
		t.Errorf("from env: %+v, %v", srv, err)
	}
	for _, bad := range []string{"5", "-1s", "0s", "soon"} {
		env = map[string]string{"READ_TIMEOUT": bad}
		if _, err := newServer("127.0.0.1:1", http.NotFoundHandler(), getenv); err == nil || !strings.Contains(err.Error(), "READ_TIMEOUT") {
			t.Errorf("READ_TIMEOUT=%q: %v, want an error naming it", bad, err)
		}
	}
}

// On shutdown a request in flight is answered, and one whose body never
// comes is cut off after the grace rather than holding the process.
func TestServeShutdownGrace(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(500 * time.Millisecond)
		}
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("done"))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, addr, h) }()

	var stalled net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if stalled, err = net.Dial("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Serve not listening: %v", err)
		}
	}
	defer stalled.Close()
	io.WriteString(stalled, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- string(body)
	}()
	time.Sleep(100 * time.Millisecond) // both requests in flight

	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5 s after shutdown began")
	}
	if took := time.Since(start); took < shutdownGrace*9/10 || took > 2*time.Second {
		t.Errorf("Serve returned %v after shutdown began, want after the %v grace and within 2 s", took, shutdownGrace)
	}
	if got := <-slow; got != "done" {
		t.Errorf("request in flight at shutdown: %q, want it answered", got)
	}
}
