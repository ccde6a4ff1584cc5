// Package hostile is what a broken or hostile HTTP/1.1 client sends a
// server under test, for the studies' API tests: headers that never end,
// bodies shorter than they say, malformed chunking, oversized headers and
// bodies. A hardened server ends each within its limit, with a 4xx or by
// closing the connection, and keeps serving.
package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Margin is the time allowed beyond a limit for a server to act on it and
// the answer to arrive, generous for a loaded 2-core machine.
const Margin = time.Second

// Limits are the server's, which the cases test.
type Limits struct {
	ReadHeader time.Duration // until the whole header has come
	Read       time.Duration // until the whole request has come
	MaxBody    int64         // the largest body it takes
}

// Case is one hostile request and what the server may answer.
type Case struct {
	Name     string
	Request  string        // written at once
	Drip     string        // then written every 100 ms until the connection ends
	Statuses []int         // acceptable answers; 0 is a close without one
	Reason   string        // in the answer's body, when there is one
	Limit    time.Duration // the server's limit that ends it; 0 for at once
}

// Cases are the standard hostile requests built on head, a request line
// and headers without the blank line that ends them, e.g.
// "POST /items HTTP/1.1\r\nHost: x\r\n".
func Cases(head string, l Limits) []Case {
	chunked := head + "Transfer-Encoding: chunked\r\n\r\n"
	over := l.MaxBody + 1
	return []Case{
		{Name: "slow headers", Request: head, Drip: "X-Drip: 1\r\n", Statuses: []int{0, http.StatusRequestTimeout}, Limit: l.ReadHeader},
		{Name: "body shorter than its length", Request: head + "Content-Length: 100\r\n\r\n{\"x\"",
			Statuses: []int{0, http.StatusBadRequest, http.StatusRequestTimeout}, Limit: l.Read},
		{Name: "malformed chunked body", Request: chunked + "zz\r\n{}\r\n0\r\n\r\n", Statuses: []int{http.StatusBadRequest}},
		{Name: "oversized header", Request: head + "X-Big: " + strings.Repeat("a", 32<<10) + "\r\n\r\n", Statuses: []int{http.StatusRequestHeaderFieldsTooLarge}},
		{Name: "oversized body", Request: head + fmt.Sprintf("Content-Length: %d\r\n\r\n", over), Statuses: []int{http.StatusRequestEntityTooLarge}},
		{Name: "oversized chunked body", Request: chunked + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", over, strings.Repeat(" ", int(over))),
			Statuses: []int{http.StatusRequestEntityTooLarge}},
	}
}

// Check sends every case to addr and checks its answer and how long it
// took; before the first and after each, stillServes checks that the
// server answers a normal request.
func Check(t *testing.T, name, addr string, cases []Case, stillServes func(t *testing.T)) {
	t.Helper()
	before := timed(t, stillServes)
	for _, c := range cases {
		status, answer, took := Send(t, addr, c.Request, c.Drip)
		t.Logf("%s, %s: %d %q after %v", name, c.Name, status, answer, took.Round(time.Millisecond))
		if !slices.Contains(c.Statuses, status) || (status != 0 && !strings.Contains(answer, c.Reason)) {
			t.Errorf("%s, %s: %d %q, want one of %v (0: closed without an answer) saying %q", name, c.Name, status, answer, c.Statuses, c.Reason)
		}
		after := timed(t, stillServes)
		if served := max(before, after); !inTime(c, took, served) {
			t.Errorf("%s, %s: ended after %v, want %v (+%v, +%v that a normal request took)", name, c.Name, took, c.Limit, Margin, served.Round(time.Millisecond))
		}
		before = after
	}
}

// inTime says whether a case that ended after took ended by its limit: not
// much before it, and not after it by more than the margin and served,
// what a normal request took around it. A loaded machine slows a server's
// answers alike, so a handler that takes a second then is not a late one;
// a server that waits out a timeout it should not is late all the same.
func inTime(c Case, took, served time.Duration) bool {
	return took >= c.Limit*9/10 && took <= c.Limit+Margin+served
}

func timed(t *testing.T, f func(t *testing.T)) time.Duration {
	t.Helper()
	start := time.Now()
	f(t)
	return time.Since(start)
}

// Send writes request (then drip every 100 ms) on a new connection to
// addr and returns the answer's status and body, status 0 if the server
// closed the connection without one, and how long that took from the
// connection's start. A server that neither answers nor closes within 15 s
// fails the test.
func Send(t *testing.T, addr, request, drip string) (int, string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	// Written aside: a server that answers before reading everything may
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
