package platform

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go-micro.dev/v5/broker"
	"go-micro.dev/v5/registry"
	"go-micro.dev/v5/server"
)

type Echo struct{}

type Empty struct{}

func (*Echo) Say(_ context.Context, _ *Empty, _ *Empty) error { return nil }

// slowFor is how long Echo.Slow takes: over the tests' read bound, as a
// 2 MB parse per call can be under load.
const slowFor = time.Second

func (*Echo) Slow(_ context.Context, _ *Empty, _ *Empty) error {
	time.Sleep(slowFor)
	return nil
}

// serve starts a go-micro server on the bounded transport and returns its
// address.
func serve(t *testing.T, readTimeout time.Duration, maxRequest int64) string {
	t.Helper()
	srv := server.NewRPCServer(
		server.Name("echo"),
		server.Address("127.0.0.1:0"),
		server.Registry(registry.NewMemoryRegistry()),
		server.Broker(broker.NewMemoryBroker()),
		server.Transport(Transport(readTimeout, maxRequest)),
	)
	if err := srv.Handle(srv.NewHandler(new(Echo))); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv.Options().Address
}

// TestTransportBoundsEveryRequest sends go-micro's server calls and hostile
// requests, as the first request of a connection (which net/http reads)
// and after a call on it (which go-micro reads itself, having hijacked the
// connection, as it does for the gateway's pooled connections).
func TestTransportBoundsEveryRequest(t *testing.T) {
	const (
		readTimeout = 300 * time.Millisecond
		maxRequest  = 4 << 10
		// Generous: the machine is shared.
		margin = 3 * time.Second
	)
	addr := serve(t, readTimeout, maxRequest)
	head := "POST / HTTP/1.1\r\nHost: echo\r\nContent-Type: application/json\r\nMicro-Service: echo\r\nMicro-Endpoint: Echo.Say\r\n"
	call := head + "Content-Length: 2\r\n\r\n{}"
	for _, tc := range []struct {
		name    string
		request string
		// statuses are the answers allowed, 0 a close without one.
		statuses []int
	}{
		{"a call", call, []int{http.StatusOK}},
		// The bound is on the request's arrival, not on its answer.
		{"a call slower than the bound", strings.Replace(call, "Echo.Say", "Echo.Slow", 1), []int{http.StatusOK}},
		{"a call just under the size", head + fmt.Sprintf("Content-Length: %d\r\n\r\n{}%s", maxRequest-len(head)-24, strings.Repeat(" ", maxRequest-len(head)-26)), []int{http.StatusOK}},
		{"body shorter than its length", head + "Content-Length: 100\r\n\r\n{}", []int{0, http.StatusInternalServerError}},
		{"header over the size", head + "X-Big: " + strings.Repeat("a", maxRequest) + "\r\n\r\n", []int{0, http.StatusBadRequest}},
		{"chunked body over the size", head + fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n{}%s\r\n0\r\n\r\n", maxRequest, strings.Repeat(" ", maxRequest-2)),
			[]int{0, http.StatusInternalServerError}},
	} {
		for _, afterCall := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/after a call=%t", tc.name, afterCall), func(t *testing.T) {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				r := bufio.NewReader(conn)
				if afterCall {
					if status, _ := send(t, conn, r, call); status != http.StatusOK {
						t.Fatalf("the first call: %d, want 200", status)
					}
					// An idle connection, as the gateway's pooled ones
					// are between calls, is not a request cut short.
					time.Sleep(2 * readTimeout)
				}
				began := time.Now()
				status, answer := send(t, conn, r, tc.request)
				took := time.Since(began)
				t.Logf("%d %q after %v", status, answer, took.Round(time.Millisecond))
				if !slices.Contains(tc.statuses, status) {
					t.Errorf("%d %q, want one of %v (0: closed without an answer)", status, answer, tc.statuses)
				}
				if took > readTimeout+margin {
					t.Errorf("ended after %v, want at most %v (+%v)", took, readTimeout, margin)
				}
			})
		}
	}
}

// send writes request on conn and reads the answer: its status and body, or
// 0 and the error when the connection ended without one; an answer saying
// the call failed fails the test. A server that
// neither answers nor closes within 10 s fails the test.
func send(t *testing.T, conn net.Conn, r *bufio.Reader, request string) (int, string) {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// Written aside: the server may answer before it has read everything.
	go conn.Write([]byte(request))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("no answer and the connection still open after 10 s")
		}
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		return 0, err.Error()
	}
	// Every call here is well formed: an error is go-micro's own.
	if e := resp.Header.Get("Micro-Error"); e != "" {
		t.Errorf("the call failed: %s", e)
	}
	return resp.StatusCode, b.String()
}
