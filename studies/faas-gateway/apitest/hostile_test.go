package apitest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/proc"
)

const requestHead = "GET /empty HTTP/1.1\r\nHost: gateway\r\n"

// shutdownGrace is the gateways' (shutdownGrace, in the module of
// the systems under test).
const shutdownGrace = 1500 * time.Millisecond

// checkHostile sends what a broken or hostile client sends, checks that the
// gateway ends each such request with the right status (0: closed without
// an answer) within its limit, and that it still serves after each.
func checkHostile(t *testing.T, gw *gateway) {
	cases := hostile.Cases(requestHead, hostile.Limits{ReadHeader: headerTimeout(gw.framework), Read: readTimeout, MaxBody: 64 << 10})
	hostile.Check(t, gw.name, gw.Addr, cases, func(t *testing.T) { checkOK(t, gw, "/empty", textPlain) })
}

// checkSigterm: on SIGTERM a request in flight (/sleep, 1 s) is answered,
// and a request whose body never comes keeps the gateway no longer than the
// shutdown grace, within the 2 s the lab's harness waits before killing.
func checkSigterm(t *testing.T, gw *gateway) {
	var conns [2]net.Conn
	for i, request := range []string{
		requestHead + "Content-Length: 100\r\n\r\n0123456789", // stalled
		"GET /sleep HTTP/1.1\r\nHost: gateway\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", gw.Addr)
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
	if err := gw.dep.Terminate(gw.Name); err != nil {
		t.Fatalf("%v; log:\n%s", err, proc.LogTail(gw.Log, 20))
	}
	took := time.Since(start)
	t.Logf("%s exited %v after SIGTERM", gw.name, took.Round(time.Millisecond))
	if took < shutdownGrace*9/10 || took > 2*time.Second {
		t.Errorf("exited %v after SIGTERM, want after the %v grace and within 2 s; log:\n%s", took, shutdownGrace, proc.LogTail(gw.Log, 20))
	}
	conns[1].SetReadDeadline(time.Now().Add(time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(conns[1]), nil); err != nil {
		t.Errorf("/sleep in flight at SIGTERM: %v, want 200", err)
	} else if resp.StatusCode != http.StatusOK {
		t.Errorf("/sleep in flight at SIGTERM: %d, want 200", resp.StatusCode)
	}
}
