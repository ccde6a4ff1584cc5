package apicheck

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// recorder keeps what a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Helper() {}

func answer(status int, contentType, timing, body string) Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if timing != "" {
		h.Set("Server-Timing", timing)
	}
	return Response{Status: status, Header: h, Body: []byte(body)}
}

func TestChecks(t *testing.T) {
	const jsonCT = "application/json; charset=utf-8"
	for _, c := range []struct {
		name  string
		check func(t testing.TB)
		says  string // "" for a check that passes
	}{
		{"status as asked", func(t testing.TB) { WantStatus(t, "get", answer(200, "", "", "ok"), 200) }, ""},
		{"status not as asked", func(t testing.TB) { WantStatus(t, "get", answer(503, "", "", "busy"), 200) }, `get: 503 "busy", want status 200`},
		{"error with its reason", func(t testing.TB) {
			WantError(t, "post", answer(400, jsonCT, "", `{"error":"body is not JSON"}`), 400, "not JSON")
		}, ""},
		{"error of another status", func(t testing.TB) {
			WantError(t, "post", answer(500, jsonCT, "", `{"error":"boom"}`), 400, "boom")
		}, "want status 400"},
		{"error not in JSON", func(t testing.TB) {
			WantError(t, "post", answer(400, "text/plain", "", `{"error":"bad"}`), 400, "bad")
		}, `Content-Type "text/plain", want JSON`},
		{"error without the reason", func(t testing.TB) {
			WantError(t, "post", answer(400, jsonCT, "", `{"error":"too big"}`), 400, "not JSON")
		}, `want {"error": "...not JSON..."}`},
		{"timings exactly", func(t testing.TB) { WantTimings(t, answer(200, "", "db;dur=1.5, cache;dur=0.2", ""), "cache", "db") }, ""},
		{"a timing missing", func(t testing.TB) { WantTimings(t, answer(200, "", "db;dur=1.5", ""), "cache", "db") }, "want exactly [cache db]"},
		{"a timing more", func(t testing.TB) { WantTimings(t, answer(200, "", "db;dur=1, x;dur=2", ""), "db") }, "want exactly [db]"},
		{"timings malformed", func(t testing.TB) { WantTimings(t, answer(200, "", "db;dur=1, ;;", ""), "db") }, "want exactly [db]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			c.check(r)
			got := strings.Join(r.errs, "\n")
			if (c.says == "") != (got == "") || !strings.Contains(got, c.says) {
				t.Errorf("check reported %q, want %q", got, c.says)
			}
		})
	}
}

func TestCallReadsTheAnswerWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"type":%q}`, r.Method, r.Header.Get("Content-Type"))
	}))
	defer srv.Close()
	r := Call(t, http.MethodPost, srv.URL, "text/csv", []byte("a,b"))
	got := Decode[struct{ Method, Type string }](t, r)
	if r.Status != 200 || got.Method != "POST" || got.Type != "text/csv" || r.Took <= 0 {
		t.Errorf("answer %v %+v took %v", r, got, r.Took)
	}
	if r := Get(t, srv.URL); !strings.Contains(string(r.Body), `"GET"`) {
		t.Errorf("GET answered %v", r)
	}
}
