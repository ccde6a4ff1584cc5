package apitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

func (r response) String() string { return fmt.Sprintf("%d %.400s", r.status, r.body) }

// httpClient waits far longer than any limit of the programs, so a program
// that hangs fails a check instead of stalling the test.
var httpClient = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

func fetch(url string) (response, error) {
	began := time.Now()
	resp, err := httpClient.Get(url)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("GET %s: read answer: %w", url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body, took: time.Since(began)}, nil
}

func get(t *testing.T, url string) response {
	t.Helper()
	r, err := fetch(url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// getRaw sends target as it is on the request line, which net/http would
// clean or refuse to send (dot segments, 10 KB).
func getRaw(t *testing.T, addr, target string) response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	began := time.Now()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: ipc.test\r\nConnection: close\r\n\r\n", target); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %.80s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body, took: time.Since(began)}
}

func wantStatus(t *testing.T, what string, r response, status int) bool {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: %v, want status %d", what, r, status)
		return false
	}
	return true
}

// wantError checks an error answer: its status, JSON with an "error" that
// says reason.
func wantError(t *testing.T, what string, r response, status int, reason string) {
	t.Helper()
	if !wantStatus(t, what, r, status) {
		return
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want JSON", what, ct)
	}
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || !strings.Contains(body.Error, reason) {
		t.Errorf("%s: %v, want an error saying %q", what, r, reason)
	}
}

// gatewayStats is the gateway's GET /stats.
type gatewayStats struct {
	Style     string                    `json:"style"`
	Pages     map[string]int            `json:"pages"`
	Calls     map[string]map[string]int `json:"calls"`
	Transport struct {
		Published   int `json:"published"`
		Confirmed   int `json:"confirmed"`
		Unconfirmed int `json:"unconfirmed"`
		Replies     int `json:"replies"`
		LateReplies int `json:"late_replies"`
		Connects    int `json:"connects"`
		Pending     int `json:"pending"`
	} `json:"transport"`
}

func statsOf(t *testing.T, g *program) gatewayStats {
	t.Helper()
	r := get(t, g.base+"/stats")
	var s gatewayStats
	if r.status != http.StatusOK || json.Unmarshal(r.body, &s) != nil {
		t.Fatalf("%s /stats: %v", g.name, r)
	}
	return s
}

// eventually polls cond every 100 ms until it holds or within runs out.
func eventually(within time.Duration, cond func() bool) bool {
	for end := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
