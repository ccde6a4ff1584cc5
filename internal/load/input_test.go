package load

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error %v, want one mentioning %q", err, want)
	case err != nil && strings.ContainsAny(err.Error(), "\r\n"):
		t.Fatalf("error %q spans lines", err)
	}
}

// Request splitting: a method or header that would not travel as one
// token or one field is refused, before any connection.
func TestCheckMethodAndHeader(t *testing.T) {
	tests := []struct {
		name, method, header, value, want string
	}{
		{"plain", "GET", "X-Trace", "a b\tc", ""},
		{"extension method and odd token", "PROPFIND", "X-!#$%&'*+.^_`|~", "ok", ""},
		{"CRLF in method", "GET / HTTP/1.1\r\nX-Inj: yes\r\n\r\nGET", "X", "v", "method"},
		{"space in method", "GE T", "X", "v", "method"},
		{"non-ASCII method", "GÉT", "X", "v", "method"},
		{"CRLF in header name", "GET", "X-A\r\nX-Inj", "1", "header name"},
		{"space in header name", "GET", "X A", "1", "header name"},
		{"colon in header name", "GET", "X:A", "1", "header name"},
		{"empty header name", "GET", "", "1", "header name"},
		{"CRLF in value", "GET", "X-A", "1\r\nX-Inj: 1", `control character '\r'`},
		{"LF in value", "GET", "X-A", "1\nX-Inj: 1", `control character '\n'`},
		{"NUL in value", "GET", "X-A", "1\x00", `control character '\x00'`},
		{"DEL in value", "GET", "X-A", "1\x7f", "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := errors.Join(CheckMethod(tt.method), CheckHeader(tt.header, tt.value))
			checkErr(t, err, tt.want)
			// The engine refuses it too, whichever front end built the
			// target (a study's targets reach it only as Targets).
			_, err = New(Config{Targets: []Target{{Method: tt.method, URL: "http://127.0.0.1:1/", Header: [][2]string{{tt.header, tt.value}}}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1})
			checkErr(t, err, tt.want)
		})
	}
}

// A listener that counts connections sees none from a refused target.
func TestSplitRequestNeverReachesTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, err = New(Config{Targets: []Target{{Method: "GET / HTTP/1.1\r\nX-Inj: yes\r\n\r\nGET", URL: "http://" + ln.Addr().String() + "/"}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1})
	if err == nil {
		t.Fatal("want the method refused")
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections reached the server", n)
	}
}

// Off-machine targets: checked with a resolver that answers from a table,
// so no test ever looks a name up or sends anything off the machine.
func TestResolveTargetKeepsLoadOnThisMachine(t *testing.T) {
	names := map[string][]netip.Addr{
		"localhost":       {netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")},
		"loop.test":       {netip.MustParseAddr("127.0.1.1")},
		"half.test":       {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.0.2.7")},
		"remote.test":     {netip.MustParseAddr("192.0.2.1")},
		"mapped.test":     {netip.MustParseAddr("::ffff:127.0.0.1")},
		"nothing.test":    {},
		"six.test":        {netip.MustParseAddr("::1")},
		"remote-six.test": {netip.MustParseAddr("2001:db8::1")},
	}
	lookup := func(_ context.Context, network, host string) ([]netip.Addr, error) {
		if ips, ok := names[host]; ok {
			return ips, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	tests := []struct {
		name, addr  string
		allowRemote bool
		dial, want  string
	}{
		{"IPv4 loopback", "127.0.0.1:8080", false, "127.0.0.1:8080", ""},
		{"anywhere in 127/8", "127.8.9.10:80", false, "127.8.9.10:80", ""},
		{"IPv6 loopback", "[::1]:80", false, "[::1]:80", ""},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]:80", false, "127.0.0.1:80", ""},
		{"localhost, IPv4 first", "localhost:80", false, "127.0.0.1:80", ""},
		{"a name on loopback", "loop.test:9", false, "127.0.1.1:9", ""},
		{"a mapped name", "mapped.test:9", false, "127.0.0.1:9", ""},
		{"an IPv6-only name", "six.test:9", false, "[::1]:9", ""},
		{"TEST-NET address", "192.0.2.1:80", false, "", "target 192.0.2.1 is not on this machine"},
		{"IPv6 documentation address", "[2001:db8::1]:80", false, "", "target 2001:db8::1 is not on this machine"},
		{"unspecified address", "0.0.0.0:80", false, "", "not on this machine"},
		{"a remote name", "remote.test:80", false, "", "target remote.test (192.0.2.1) is not on this machine"},
		{"a remote IPv6 name", "remote-six.test:80", false, "", "remote-six.test (2001:db8::1)"},
		{"a name with one remote address", "half.test:80", false, "", "half.test (192.0.2.7)"},
		{"a name without addresses", "nothing.test:80", false, "", "no address"},
		{"an unknown name", "unknown.test:80", false, "", "resolve unknown.test"},
		{"remote when allowed", "192.0.2.1:80", true, "192.0.2.1:80", ""},
		{"a remote name when allowed", "half.test:80", true, "127.0.0.1:80", ""},
		{"bad port", "127.0.0.1:http", false, "", "port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveTarget(context.Background(), tt.addr, tt.allowRemote, lookup)
			checkErr(t, err, tt.want)
			if err == nil && got.String() != tt.dial {
				t.Fatalf("dials %v, want %s", got, tt.dial)
			}
		})
	}
}

// The engine refuses an off-machine literal address before it dials:
// New never connects, and the address needs no lookup.
func TestNewRefusesRemoteTargets(t *testing.T) {
	for _, url := range []string{"http://192.0.2.1:9/", "https://192.0.2.1/", "http://[2001:db8::1]:9/"} {
		for _, open := range []bool{false, true} {
			cfg := Config{Targets: []Target{{URL: url}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1}
			if open {
				cfg = Config{Targets: cfg.Targets, Connections: 1, Timeout: time.Second, Pacer: constant(t, 1, time.Second)}
			}
			_, err := New(cfg)
			checkErr(t, err, "not on this machine")
		}
	}
}

// A load cut by its time bound before its count says so.
func TestTimeBoundCuttingACountIsWarned(t *testing.T) {
	srv := okServer(t, nil)
	tests := []struct {
		name string
		cfg  Config
		want bool
	}{
		{"cut", Config{Targets: []Target{{URL: srv.URL}}, Users: 1, MaxRequests: 1000, Duration: 100 * time.Millisecond, Think: Think{Min: 30 * time.Millisecond, Max: 30 * time.Millisecond}}, true},
		{"iterations cut", Config{Targets: []Target{{URL: srv.URL}}, Users: 2, Iterations: 1000, Duration: 100 * time.Millisecond, Think: Think{Min: 30 * time.Millisecond, Max: 30 * time.Millisecond}}, true},
		{"count reached", Config{Targets: []Target{{URL: srv.URL}}, Users: 2, MaxRequests: 3, Duration: time.Hour}, false},
		{"duration only", Config{Targets: []Target{{URL: srv.URL}}, Users: 2, Duration: 100 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, tt.cfg, Options{})
			got := strings.Contains(strings.Join(s.Warnings, "\n"), "the time bound of")
			if got != tt.want {
				t.Fatalf("warned %v, want %v: %d requests, warnings %q", got, tt.want, s.Requests, s.Warnings)
			}
		})
	}
}

// Users that could never send are not created: twenty thousand users for
// two requests took a gigabyte before (each user's buffers), a few
// kilobytes now. Allocation counts do not depend on timing.
func TestUsersBeyondTheRequestsAreNotCreated(t *testing.T) {
	srv := okServer(t, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 20_000, Connections: 2, MaxRequests: 2}, Options{})
	runtime.ReadMemStats(&after)
	if s.Requests != 2 {
		t.Fatalf("%d requests, want 2", s.Requests)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("allocated %d MiB for two requests", alloc>>20)
	}
}
