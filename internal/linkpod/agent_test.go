package linkpod

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/proc"
)

// startAgent runs an agent in front of upstream on loopback until the
// test ends, and returns its ready line.
func startAgent(t *testing.T, upstream string) Ready {
	t.Helper()
	var ports proc.PortAllocator
	addr := func() string {
		p, err := ports.Next()
		if err != nil {
			t.Fatal(err)
		}
		return "127.0.0.1:" + strconv.Itoa(p)
	}
	o := Options{Name: "test", Listen: addr(), To: upstream, Control: addr(), Spec: links.Spec{Latency: time.Millisecond}}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, w); w.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the agent stopped with %v", err)
		}
	})
	out := bufio.NewReader(r)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	go io.Copy(io.Discard, out)
	var ready Ready
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.Event != "ready" || ready.Listen != o.Listen || ready.Control != o.Control {
		t.Fatalf("ready line %q: %+v, %v", line, ready, err)
	}
	return ready
}

// echo serves each connection: it reads everything until the client's
// half-close, then writes it back reversed and closes.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				in, _ := io.ReadAll(c)
				out := bytes.Clone(in)
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
				c.Write(out)
			}()
		}
	}()
	return ln.Addr().String()
}

// The relay keeps TCP's half-close: the client's FIN reaches the server,
// which still answers on the half-closed connection.
func TestRelayHalfClose(t *testing.T) {
	a := startAgent(t, echo(t))
	c, err := net.Dial("tcp", a.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "cba" {
		t.Errorf("after a half-close: %q, %v; want cba and the server's close", got, err)
	}
}

// The link's reset fault reaches the client as a reset, not a close: an
// open connection's next read fails with ECONNRESET, and so does a new
// connection's.
func TestRelayPassesResets(t *testing.T) {
	a := startAgent(t, echo(t))
	open, err := net.Dial("tcp", a.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	open.Write([]byte("held")) // the echo waits for the half-close
	// Until the link carries the connection (its dial to the upstream
	// done), a reset would find nothing to reset.
	deadline := time.Now().Add(30 * time.Second)
	for statsOf(t, a.Control).Open == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Post("http://"+a.Control+"/fault", "application/json", strings.NewReader(`{"fault":"reset"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /fault: %s", resp.Status)
	}
	conns := map[string]net.Conn{"open": open}
	// A new connection's reset may come before connect returns.
	if fresh, err := net.Dial("tcp", a.Listen); !errors.Is(err, syscall.ECONNRESET) {
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		conns["new"] = fresh
	}
	for name, c := range conns {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := c.Read(make([]byte, 16))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s connection: read %v, want a reset", name, err)
		}
	}
}

func statsOf(t *testing.T, control string) Stats {
	t.Helper()
	resp, err := http.Get("http://" + control + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
