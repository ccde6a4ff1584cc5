package apitest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/hostile"
)

// restPaths are a request each REST service answers, on its route
// (../services/src/lib/services.js).
var restPaths = map[string]string{
	"product":         "/products/1",
	"reviews":         "/products/1/reviews",
	"recommendations": "/products/1/recommendations",
	"shipping":        "/products/1/shipping?customer=1",
	"cart":            "/customers/1/cart",
}

// maxInFlight is how many requests one connection may have under way in
// every HTTP server of the programs; beyond, they are answered 503.
const maxInFlight = 16

// checkHostile sends p what a broken or hostile client sends: each such
// request ends within the program's limit, with a 4xx or a closed
// connection, and a normal request to path is answered after each.
func checkHostile(t *testing.T, p *program, path string) {
	head := "GET " + path + " HTTP/1.1\r\nHost: ipc.test\r\n"
	cases := hostile.Cases(head, hostile.Limits{ReadHeader: headersTimeout, Read: requestTimeout, MaxBody: maxBody})
	for i, c := range cases {
		cases[i].Reason = map[string]string{"oversized body": "request body over", "oversized chunked body": "request body over"}[c.Name]
	}
	cases = append(cases, bodyCases(path)...)
	hostile.Check(t, p.style+" "+p.name, p.addr, cases, func(t *testing.T) {
		apicheck.WantStatus(t, path, apicheck.Get(t, p.base+path), http.StatusOK)
	})
}

// bodyCases are requests with a body, which no route of the programs takes,
// in the methods that Fastify parses bodies for: each is answered at once,
// 404 (no such route) or 415 (a malformed content type), with a reason.
// The programs' guard used to read such a body before Fastify, whose
// parser then waited for a body already gone: no answer, ever, and the
// request timeout did not fire on a request already whole.
func bodyCases(path string) []hostile.Case {
	const body = `{"id":{"$gt":""}}`
	var cases []hostile.Case
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		for _, target := range []string{path, "/products/17", "/no/such/route"} {
			for _, ct := range []string{"application/json", "text/plain", "application/x-www-form-urlencoded", "", ";;;"} {
				head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: ipc.test\r\n", method, target)
				if ct != "" {
					head += "Content-Type: " + ct + "\r\n"
				}
				c := hostile.Case{
					Name:     fmt.Sprintf("%s %s with a %q body", method, target, ct),
					Request:  head + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body),
					Statuses: []int{http.StatusNotFound},
					Reason:   "no route for " + method,
				}
				if ct == ";;;" {
					c.Statuses, c.Reason = []int{http.StatusUnsupportedMediaType}, "Unsupported Media Type"
				}
				cases = append(cases, c)
			}
		}
		cases = append(cases, hostile.Case{
			Name:     method + " with a chunked JSON body",
			Request:  fmt.Sprintf("%s %s HTTP/1.1\r\nHost: ipc.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", method, path, len(body), body),
			Statuses: []int{http.StatusNotFound},
			Reason:   "no route for " + method,
		})
	}
	return cases
}

// checkHostileAll runs checkHostile on every program of d that serves HTTP
// but the gateway, at once: the rest services on their routes, the amqp
// services' health servers on /healthz.
func checkHostileAll(t *testing.T, d *deployment) {
	for _, name := range services {
		p := d.services[name]
		if !p.servesHTTP() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := "/healthz"
			if p.style == "rest" {
				path = restPaths[name]
			}
			checkHostile(t, p, path)
		})
	}
}

// checkPipelined hangs the product service and sends the gateway 2,000
// pipelined page requests in one go, as a hostile client does: the gateway
// starts no more than maxInFlight of them at once, answering the others
// 503 with Retry-After, answers every one, in order, and keeps serving.
// The pages started while the service hangs wait for it until the call
// timeout (504); it resumes once the first of them is answered, so those
// the gateway reads later are served. Node's server alone started all
// 2,000 pages at once, 10,000 calls, over the gateway's memory cap.
//
// d's gateway has long header and request timeouts (floodHeadersTimeout):
// while the first pages wait, the gateway reads no more of the connection
// (Node holds back while the 503s queue up), and a request it has read in
// part would otherwise be cut by the 1 s header timeout of the other
// checks.
func checkPipelined(t *testing.T, d *deployment) {
	const pipelined = 2000
	g := d.gateway
	resumed := d.pause(t, "product")
	defer resumed()

	conn, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var flood strings.Builder
	for i := range pipelined {
		fmt.Fprintf(&flood, "GET /products/%d HTTP/1.1\r\nHost: ipc.test\r\n\r\n", 1+i%1000)
	}
	began := time.Now()
	// Written aside: the gateway stops reading while its answers queue up.
	go io.WriteString(conn, flood.String())
	conn.SetReadDeadline(began.Add(callTimeout + 30*time.Second))
	answers := map[int]int{}
	reader := bufio.NewReader(conn)
	for i := range pipelined {
		resp, err := http.ReadResponse(reader, nil)
		if err != nil {
			t.Fatalf("answer %d of %d pipelined requests: %v after %v (so far %v)", 1+i, pipelined, err, time.Since(began), answers)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("answer %d: %v", 1+i, err)
		}
		answers[resp.StatusCode]++
		resumed()
		if resp.StatusCode == http.StatusServiceUnavailable && (resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "under way")) {
			t.Errorf("answer %d: 503 %s %q, want Retry-After and a reason", 1+i, resp.Header, body)
		}
	}
	took := time.Since(began)
	t.Logf("%s: %d pipelined page requests answered in %v: %v", d.name, pipelined, took.Round(time.Millisecond), answers)
	if late := answers[http.StatusGatewayTimeout]; late == 0 || late > maxInFlight {
		t.Errorf("%d pipelined pages waited for the hung service at once (%v), want 1 to %d", late, answers, maxInFlight)
	}
	if answers[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no pipelined page was refused (%v), want 503 beyond %d under way", answers, maxInFlight)
	}
	if !answersPage(g, 10*time.Second) {
		t.Errorf("no page 10 s after the pipelined flood")
	}
}
