package apitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/proc"
)

const mutationHead = "POST /roles/1/permissions HTTP/1.1\r\nHost: rbac.test\r\nContent-Type: application/json\r\n"

// checkHostile sends what a broken or hostile client sends to s: each such
// request is ended with its status (0: closed without an answer) within
// the service's limit, and a normal request is answered after each.
func checkHostile(t *testing.T, s *service) {
	cases := hostile.Cases(mutationHead, hostile.Limits{ReadHeader: readHeaderTimeout, Read: readTimeout, MaxBody: 1 << 20})
	for i, c := range cases {
		cases[i].Reason = map[string]string{"malformed chunked body": "chunk", "oversized body": "body over", "oversized chunked body": "over"}[c.Name]
	}
	hostile.Check(t, s.name, s.addr, cases, func(t *testing.T) {
		r := get(t, s.base+"/roles/1")
		wantStatus(t, r, http.StatusOK)
		if got := decode[role](t, r); got.ID != 1 {
			t.Errorf("GET /roles/1 answered role %d", got.ID)
		}
	})
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
