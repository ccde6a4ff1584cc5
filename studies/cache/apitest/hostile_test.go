package apitest

import (
	"bufio"
	"context"
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

	"github.com/msbench/msbench/internal/proc"
)

// margin is the time allowed beyond a limit for a service to act on it and
// the answer to arrive.
const margin = time.Second

const mutationHead = "POST /roles/1/permissions HTTP/1.1\r\nHost: rbac.test\r\nContent-Type: application/json\r\n"

// checkHostile sends what a broken or hostile client sends to s: each such
// request is ended with its status (0: closed without an answer) within
// the service's limit, and a normal request is answered after each.
func checkHostile(t *testing.T, s *service) {
	chunked := mutationHead + "Transfer-Encoding: chunked\r\n\r\n"
	for _, c := range []struct {
		name     string
		request  string
		drip     string // sent every 100 ms after request until the connection ends
		statuses []int
		reason   string        // in the answer, if there is one
		limit    time.Duration // the service's limit that ends it; 0 for at once
	}{
		{"slow headers", mutationHead, "X-Drip: 1\r\n", []int{0, http.StatusRequestTimeout}, "", readHeaderTimeout},
		{"body shorter than its length", mutationHead + "Content-Length: 100\r\n\r\n{\"permission_id\"", "",
			[]int{0, http.StatusBadRequest, http.StatusRequestTimeout}, "", readTimeout},
		{"malformed chunked body", chunked + "zz\r\n{}\r\n0\r\n\r\n", "", []int{http.StatusBadRequest}, "chunk", 0},
		{"oversized header", mutationHead + "X-Big: " + strings.Repeat("a", 32<<10) + "\r\n\r\n", "",
			[]int{http.StatusRequestHeaderFieldsTooLarge}, "", 0},
		{"oversized body", mutationHead + "Content-Length: 2097152\r\n\r\n", "", []int{http.StatusRequestEntityTooLarge}, "body over", 0},
		{"oversized chunked body", chunked + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 2<<20, strings.Repeat(" ", 2<<20)), "",
			[]int{http.StatusRequestEntityTooLarge}, "over", 0},
	} {
		status, answer, took := rawRequest(t, s.addr, c.request, c.drip)
		t.Logf("%s, %s: %d %q after %v", s.name, c.name, status, answer, took.Round(time.Millisecond))
		if !slices.Contains(c.statuses, status) || (status != 0 && !strings.Contains(answer, c.reason)) {
			t.Errorf("%s: %d %q, want one of %v (0: closed without an answer) saying %q", c.name, status, answer, c.statuses, c.reason)
		}
		if took < c.limit*9/10 || took > c.limit+margin {
			t.Errorf("%s: ended after %v, want %v (+%v)", c.name, took, c.limit, margin)
		}
		r := get(t, s.base+"/roles/1")
		wantStatus(t, r, http.StatusOK)
		if got := decode[role](t, r); got.ID != 1 {
			t.Errorf("after %s: GET /roles/1 answered role %d", c.name, got.ID)
		}
	}
}

// rawRequest writes request (then drip every 100 ms) on a new connection to
// addr and returns the answer's status and body, status 0 if the service
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
	// Written aside: a service that answers before reading everything may
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

// checkSigterm starts a program of its own and stops it while a request's
// body never comes: it exits after the shutdown grace (1.5 s), within the
// 2 s the lab's harness waits before killing. The read timeouts are long,
// so only the grace can end that request.
func checkSigterm(ctx context.Context, t *testing.T, name, bin string, ports *proc.PortAllocator, env []string) {
	s := launch(ctx, t, "sigterm", name, bin, ports, env, "READ_HEADER_TIMEOUT=10s", "READ_TIMEOUT=10s")
	waitReady(ctx, t, s)
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, mutationHead+"Content-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request is in flight

	start := time.Now()
	if err := s.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.proc.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still running 5 s after SIGTERM; log:\n%s", name, readLog(s))
	}
	took := time.Since(start)
	t.Logf("%s exited %v after SIGTERM", name, took.Round(time.Millisecond))
	if took < 1350*time.Millisecond || took > 2*time.Second {
		t.Errorf("%s exited %v after SIGTERM, want after the 1.5 s grace and within 2 s", name, took)
	}
}
