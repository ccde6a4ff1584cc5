package apitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
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
		r := apicheck.Get(t, s.base+"/roles/1")
		mustStatus(t, "GET /roles/1", r, http.StatusOK)
		if got := apicheck.Decode[role](t, r); got.ID != 1 {
			t.Errorf("GET /roles/1 answered role %d", got.ID)
		}
	})
}

// checkSigterm starts a deployment of its own whose read timeouts are
// long, so that only the shutdown grace (1.5 s) can end a request whose
// body never comes, and stops its gateway, then its rbac instance, each
// while such a request is in flight: each exits after the grace, within
// the 2 s the lab waits at an interrupt before killing.
func checkSigterm(ctx context.Context, t *testing.T, lab *deploytest.Lab) {
	long := map[string]string{"READ_HEADER_TIMEOUT": "10s", "READ_TIMEOUT": "10s"}
	opts := overrides("db", "1", long)
	opts.Env["gateway"] = long
	dep := lab.Start(ctx, t, opts)
	// The gateway first: the request it holds is one its rbac holds too.
	for _, s := range []*service{services(dep, "gateway")[0], services(dep, "rbac")[0]} {
		t.Run(s.name, func(t *testing.T) { checkTerminate(t, dep, s) })
	}
}

func checkTerminate(t *testing.T, dep *runner.Deployment, s *service) {
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
	if err := dep.Terminate(s.name); err != nil {
		t.Fatalf("%v; log:\n%s", err, readLog(s))
	}
	took := time.Since(start)
	t.Logf("%s exited %v after SIGTERM", s.name, took.Round(time.Millisecond))
	if took < 1350*time.Millisecond || took > 2*time.Second {
		t.Errorf("%s exited %v after SIGTERM, want after the 1.5 s grace and within 2 s; log:\n%s", s.name, took, readLog(s))
	}
}
