// Package apicheck holds what the studies' API tests ask of an HTTP
// answer: read it whole, and check its status, its error's reason, its
// Server-Timing stages and its JSON. A check reports through
// testing.TB, as the test's own code would, so that every study's tests
// say the same thing about the same failure.
package apicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/servertiming"
)

// Response is an answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Took   time.Duration // from sending the request to the body's end
}

func (r Response) String() string { return fmt.Sprintf("%d %.300q", r.Status, r.Body) }

// Client waits far longer than any limit of a study's services, so a
// service that hangs fails a check instead of stalling the test.
var Client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// Do sends req with c and reads the answer whole.
func Do(c *http.Client, req *http.Request) (Response, error) {
	began := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read answer: %w", req.Method, req.URL, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Took: time.Since(began)}, nil
}

// Call sends a request with Client, its body (if any) of contentType, and
// fails t if no answer comes.
func Call(t testing.TB, method, url, contentType string, body []byte) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	r, err := Do(Client, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Get is Call of a GET.
func Get(t testing.TB, url string) Response {
	t.Helper()
	return Call(t, http.MethodGet, url, "", nil)
}

// WantStatus fails t, saying what was asked and what came back, unless r
// has the status want; it reports whether it had.
func WantStatus(t testing.TB, what string, r Response, want int) bool {
	t.Helper()
	if r.Status != want {
		t.Errorf("%s: %v, want status %d", what, r, want)
		return false
	}
	return true
}

// WantError checks an error answer: its status, and a JSON body
// {"error": "..."} whose reason says reason, as every study's services
// answer a request they refuse.
func WantError(t testing.TB, what string, r Response, status int, reason string) {
	t.Helper()
	if !WantStatus(t, what, r, status) {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want JSON", what, ct)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || !strings.Contains(e.Error, reason) {
		t.Errorf(`%s: %v, want {"error": "...%s..."}`, what, r, reason)
	}
}

// Decode is r's JSON body as a T; it fails t now if the body is not one.
func Decode[T any](t testing.TB, r Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("answer %v: %v", r, err)
	}
	return v
}

// WantTimings checks that r's Server-Timing is well formed and names
// exactly the stages given, in any order.
func WantTimings(t testing.TB, r Response, stages ...string) {
	t.Helper()
	value := r.Header.Get("Server-Timing")
	metrics, malformed := servertiming.Parse(nil, []byte(value))
	var got []string
	for _, m := range metrics {
		got = append(got, string(m.Name))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(stages))
	if malformed > 0 || !slices.Equal(got, want) {
		t.Errorf("Server-Timing %q, want exactly %v", value, want)
	}
}
