package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

// margin is the time allowed beyond a limit for the gateway to act on it and
// the answer to arrive, generous for a loaded 2-core machine.
const margin = time.Second

const requestHead = "GET /empty HTTP/1.1\r\nHost: gateway\r\n"

// checkHostile sends what a broken or hostile client sends, checks that the
// gateway ends each such request with the right status (0: closed without
// an answer) within its limit, and that it still serves after each.
func checkHostile(t *testing.T, gw *process, framework string) {
	chunked := requestHead + "Transfer-Encoding: chunked\r\n\r\n"
	for _, c := range []struct {
		name     string
		request  string
		drip     string // sent every 100 ms after request until the connection ends
		statuses []int
		limit    time.Duration // the gateway's limit that ends it; 0 for at once
	}{
		{"slow headers", requestHead, "X-Drip: 1\r\n", []int{0, http.StatusRequestTimeout}, headerTimeout(framework)},
		{"body shorter than its length", requestHead + "Content-Length: 100\r\n\r\n0123456789", "",
			[]int{0, http.StatusBadRequest, http.StatusRequestTimeout}, readTimeout},
		{"malformed chunked body", chunked + "zz\r\nhello\r\n0\r\n\r\n", "", []int{http.StatusBadRequest}, 0},
		{"oversized header", requestHead + "X-Big: " + strings.Repeat("a", 32<<10) + "\r\n\r\n", "",
			[]int{http.StatusRequestHeaderFieldsTooLarge}, 0},
		{"oversized body", requestHead + "Content-Length: 1048576\r\n\r\n", "", []int{http.StatusRequestEntityTooLarge}, 0},
		{"oversized chunked body", chunked + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 128<<10, strings.Repeat("a", 128<<10)), "",
			[]int{http.StatusRequestEntityTooLarge}, 0},
	} {
		status, reason, took := rawRequest(t, gw.addr, c.request, c.drip)
		t.Logf("%s, %s: %d %q after %v", gw.name, c.name, status, reason, took.Round(time.Millisecond))
		if !slices.Contains(c.statuses, status) {
			t.Errorf("%s: status %d %q, want one of %v (0: closed without an answer)", c.name, status, reason, c.statuses)
		}
		if took < c.limit*9/10 || took > c.limit+margin {
			t.Errorf("%s: ended after %v, want %v (+%v)", c.name, took, c.limit, margin)
		}
		checkOK(t, gw, "/empty", textPlain)
	}
}

// rawRequest writes request (then drip every 100 ms) on a new connection to
// addr and returns the answer's status and body, status 0 if the gateway
// closed the connection without one, and how long that took from the
// connection's start.
func rawRequest(t *testing.T, addr, request, drip string) (int, string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	// Written aside: a gateway that answers before reading everything may
	// leave a large request blocked in the socket buffers.
	go func() {
		if _, err := io.WriteString(conn, request); err != nil || drip == "" {
			return
		}
		for range time.Tick(100 * time.Millisecond) {
			if _, err := io.WriteString(conn, drip); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(start.Add(15 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	if err != nil {
		if netErr := net.Error(nil); errors.As(err, &netErr) && netErr.Timeout() {
			t.Fatalf("no answer and the connection still open after %v", took)
		}
		return 0, err.Error(), took
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), took
}

// checkSigterm: on SIGTERM a request in flight (/sleep, 1 s) is answered,
// and a request whose body never comes keeps the gateway no longer than the
// shutdown grace, within the 2 s the lab's harness waits before killing.
func checkSigterm(t *testing.T, gw *process) {
	var conns [2]net.Conn
	for i, request := range []string{
		requestHead + "Content-Length: 100\r\n\r\n0123456789", // stalled
		"GET /sleep HTTP/1.1\r\nHost: gateway\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", gw.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, request); err != nil {
			t.Fatal(err)
		}
		conns[i] = conn
	}
	time.Sleep(200 * time.Millisecond) // both requests read by the gateway

	start := time.Now()
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { gw.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM; output:\n%s", gw.output())
	}
	took := time.Since(start)
	t.Logf("%s exited %v after SIGTERM", gw.name, took.Round(time.Millisecond))
	if took < gateway.ShutdownGrace*9/10 || took > 2*time.Second {
		t.Errorf("exited %v after SIGTERM, want after the %v grace and within 2 s", took, gateway.ShutdownGrace)
	}
	conns[1].SetReadDeadline(time.Now().Add(time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(conns[1]), nil); err != nil {
		t.Errorf("/sleep in flight at SIGTERM: %v, want 200", err)
	} else if resp.StatusCode != http.StatusOK {
		t.Errorf("/sleep in flight at SIGTERM: %d, want 200", resp.StatusCode)
	}
}
