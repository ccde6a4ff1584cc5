package apitest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
)

// fetch GETs url with header without failing the test, for polls and
// for requests sent from goroutines.
func fetch(url string, header http.Header) (apicheck.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return apicheck.Response{}, err
	}
	req.Header = header
	return apicheck.Do(apicheck.Client, req)
}

// getRaw sends target as it is on the request line, which net/http would
// clean or refuse to send (dot segments, 10 KB).
func getRaw(t *testing.T, addr, target string) apicheck.Response {
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
	return apicheck.Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Took: time.Since(began)}
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
	r := apicheck.Get(t, g.base+"/stats")
	if !apicheck.WantStatus(t, g.name+" /stats", r, http.StatusOK) {
		t.FailNow()
	}
	return apicheck.Decode[gatewayStats](t, r)
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

// answersPage polls g for a page until one is 200 or within runs out.
func answersPage(g *program, within time.Duration) bool {
	return eventually(within, func() bool {
		r, err := fetch(g.base+"/products/7", nil)
		return err == nil && r.Status == http.StatusOK
	})
}
