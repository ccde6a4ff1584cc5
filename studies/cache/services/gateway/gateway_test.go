package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// echoUpstream answers with its name in X-Instance and echoes what it got.
func echoUpstream(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Instance", name)
		w.Header().Set("X-Cache", "hit")
		w.Header().Set("X-Got-Trace", r.Header.Get("X-Trace"))
		w.Header().Set("X-Got-Forwarded-For", r.Header.Get("X-Forwarded-For"))
		w.Header().Set("X-Got-Host", r.Host)
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(r.Method + " " + r.URL.RequestURI() + " " + string(body)))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// deadAddr is an address on which nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func newTestGateway(t *testing.T, addrs ...string) *httptest.Server {
	t.Helper()
	ups, err := parseUpstreams(strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(newGateway(ups).routes())
	t.Cleanup(gw.Close)
	return gw
}

type gatewayStats struct {
	Requests  int64           `json:"requests"`
	Upstreams []upstreamStats `json:"upstreams"`
}

func getStats(t *testing.T, gw *httptest.Server) gatewayStats {
	t.Helper()
	resp, err := http.Get(gw.URL + "/gateway/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s gatewayStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundRobinPassesEverythingThrough(t *testing.T) {
	a, b, c := echoUpstream(t, "a"), echoUpstream(t, "b"), echoUpstream(t, "c")
	gw := newTestGateway(t, a, b, c)
	var order []string
	for range 6 {
		req, _ := http.NewRequest(http.MethodPatch, gw.URL+"/roles/3?x=1", strings.NewReader(`{"name":"n"}`))
		req.Host = "rbac.test"
		req.Header.Set("X-Trace", "t-1")
		req.Header.Set("X-Forwarded-For", "192.0.2.7")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		order = append(order, resp.Header.Get("X-Instance"))
		for h, want := range map[string]string{
			"X-Cache": "hit", "X-Got-Trace": "t-1", "X-Got-Forwarded-For": "192.0.2.7", "X-Got-Host": "rbac.test",
		} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		if resp.StatusCode != http.StatusTeapot || string(body) != `PATCH /roles/3?x=1 {"name":"n"}` {
			t.Errorf("answer %d %q, want the upstream's own", resp.StatusCode, body)
		}
	}
	if got := strings.Join(order, ""); got != "abcabc" {
		t.Errorf("instances in order %s, want abcabc", got)
	}
	s := getStats(t, gw)
	if s.Requests != 6 || len(s.Upstreams) != 3 {
		t.Fatalf("stats %+v, want 6 requests over 3 upstreams", s)
	}
	for i, u := range s.Upstreams {
		if u.Addr != []string{a, b, c}[i] || u.Requests != 2 || u.Failures != 0 {
			t.Errorf("upstream %d: %+v, want 2 requests and no failure", i, u)
		}
	}
}

func TestDownUpstreamIsA502WithoutRetry(t *testing.T) {
	live, dead := echoUpstream(t, "live"), deadAddr(t)
	gw := newTestGateway(t, live, dead)
	var statuses []int
	for range 4 {
		resp, err := http.Get(gw.URL + "/roles")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode == http.StatusBadGateway && !strings.Contains(string(body), "upstream "+dead) {
			t.Errorf("502 body %q does not name the upstream", body)
		}
	}
	if want := []int{418, 502, 418, 502}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v: no retry on the live upstream", statuses, want)
	}
	s := getStats(t, gw)
	if s.Upstreams[1].Requests != 2 || s.Upstreams[1].Failures != 2 || s.Upstreams[0].Failures != 0 {
		t.Errorf("stats %+v, want 2 requests and 2 failures on the dead upstream", s)
	}
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/gateway/stats/reset", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("reset: %v, %v", resp, err)
	}
	if s := getStats(t, gw); s.Requests != 0 || s.Upstreams[1].Failures != 0 {
		t.Errorf("stats after reset %+v, want zeros", s)
	}
}

// A request body that is malformed or never completes is the client's
// fault: 400 or 408 with the reason, not the 502 of an upstream failure,
// and no upstream is asked.
func TestBadRequestBodyIsTheClients(t *testing.T) {
	ups, err := parseUpstreams(echoUpstream(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	const readTimeout = 300 * time.Millisecond
	gw := httptest.NewUnstartedServer(newGateway(ups).routes())
	gw.Config.ReadTimeout = readTimeout
	gw.Start()
	t.Cleanup(gw.Close)

	head := "POST /roles/1/permissions HTTP/1.1\r\nHost: rbac.test\r\n"
	for _, c := range []struct {
		name, request string
		status        int
		reason        string
	}{
		{"malformed chunked", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", http.StatusBadRequest, "chunk"},
		{"shorter than its length", head + "Content-Length: 100\r\n\r\n{\"permission_id\"", http.StatusRequestTimeout, "not received in time"},
	} {
		conn, err := net.Dial("tcp", gw.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		io.WriteString(conn, c.request)
		conn.SetReadDeadline(start.Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.reason) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, resp.StatusCode, body, c.status, c.reason)
		}
		if took := time.Since(start); took > readTimeout+time.Second {
			t.Errorf("%s: answered after %v, want within the read timeout %v", c.name, took, readTimeout)
		}
	}
	if s := getStats(t, gw); s.Requests != 0 || s.Upstreams[0].Failures != 0 {
		t.Errorf("stats %+v, want no request passed on and no upstream failure", s)
	}
	resp, err := http.Post(gw.URL+"/roles/1/permissions", "application/json", strings.NewReader(`{"permission_id":7}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `POST /roles/1/permissions {"permission_id":7}` {
		t.Errorf("after the bad bodies: %d %q, want the upstream's echo", resp.StatusCode, body)
	}
}
