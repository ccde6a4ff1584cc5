package apitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/servertiming"
)

// role and permission are the API's JSON.
type role struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	Permissions []permission `json:"permissions"`
}

type permission struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func (r role) holds(permID int64) bool {
	return slices.ContainsFunc(r.Permissions, func(p permission) bool { return p.ID == permID })
}

type stats struct {
	DBQueries   int64 `json:"db_queries"`
	CacheHits   int64 `json:"cache_hits"`
	CacheMisses int64 `json:"cache_misses"`
	CacheErrors int64 `json:"cache_errors"`
	Requests    int64 `json:"requests"`
}

type response struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

func (r response) String() string {
	return fmt.Sprintf("%d %.300s", r.status, r.body)
}

// client has a timeout well above the services' own, so a service that
// hangs fails the test instead of stalling it.
var client = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func do(c *http.Client, method, url, body string) (response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	began := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: read answer: %w", method, url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data, took: time.Since(began)}, nil
}

func call(t *testing.T, method, url, body string) response {
	t.Helper()
	r, err := do(client, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t *testing.T, url string) response { return call(t, http.MethodGet, url, "") }

func wantStatus(t *testing.T, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %.300q", r.status, want, r.body)
	}
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer %.300q: %v", r.body, err)
	}
	return v
}

// version is the answer's X-Data-Version.
func version(t *testing.T, r response) int64 {
	t.Helper()
	v, err := strconv.ParseInt(r.header.Get("X-Data-Version"), 10, 64)
	if err != nil {
		t.Fatalf("X-Data-Version %q: %v", r.header.Get("X-Data-Version"), err)
	}
	return v
}

// wantHeader checks the answer has header h set to want.
func wantHeader(t *testing.T, r response, h, want string) {
	t.Helper()
	if got := r.header.Get(h); got != want {
		t.Errorf("%s %q, want %q", h, got, want)
	}
}

// wantTimings: Server-Timing names exactly these stages, each with a duration.
func wantTimings(t *testing.T, r response, names ...string) {
	t.Helper()
	value := r.header.Get("Server-Timing")
	metrics, malformed := servertiming.Parse(nil, []byte(value))
	var got []string
	for _, m := range metrics {
		got = append(got, string(m.Name))
	}
	slices.Sort(got)
	slices.Sort(names)
	if malformed > 0 || !slices.Equal(got, names) {
		t.Errorf("Server-Timing %q, want exactly %v", value, names)
	}
}

// wantError checks an error answer: status, and {"error": reason} with
// reason mentioning want.
func wantError(t *testing.T, r response, status int, want string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status %d, want %d; body %.300q", r.status, status, r.body)
		return
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || !strings.Contains(e.Error, want) {
		t.Errorf(`body %.300q, want {"error": "...%s..."}`, r.body, want)
	}
}

func getStats(t *testing.T, s *service) stats {
	t.Helper()
	r := get(t, s.base+"/stats")
	wantStatus(t, r, http.StatusOK)
	return decode[stats](t, r)
}

func resetStats(t *testing.T, s *service) {
	t.Helper()
	wantStatus(t, call(t, http.MethodPost, s.base+"/stats/reset", ""), http.StatusNoContent)
}

// burst sends n GETs of url at once and returns their answers. It opens
// the n connections first, so that the requests leave together instead of
// one behind each TCP handshake.
func burst(t *testing.T, base, path string, n int) []response {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	fire := func(url string) []response {
		answers := make([]response, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				answers[i], errs[i] = do(c, http.MethodGet, url, "")
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return answers
	}
	fire(base + "/healthz")
	return fire(base + path)
}

// drop empties s's cache, where its strategy caches: a mutation through s
// drops its copy (and for redis, everybody's).
func drop(t *testing.T, s *service) {
	t.Helper()
	wantStatus(t, call(t, http.MethodPost, s.base+"/roles/1/permissions", `{"permission_id": 1}`), http.StatusOK)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
