package apitest

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
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

// jsonType is the Content-Type of the API's bodies, both ways.
const jsonType = "application/json"

// mustStatus stops the test unless r has the status want: what follows
// reads r as that answer.
func mustStatus(t *testing.T, what string, r apicheck.Response, want int) {
	t.Helper()
	if !apicheck.WantStatus(t, what, r, want) {
		t.FailNow()
	}
}

// version is the answer's X-Data-Version.
func version(t *testing.T, r apicheck.Response) int64 {
	t.Helper()
	v, err := strconv.ParseInt(r.Header.Get("X-Data-Version"), 10, 64)
	if err != nil {
		t.Fatalf("X-Data-Version %q: %v", r.Header.Get("X-Data-Version"), err)
	}
	return v
}

// wantHeader checks the answer has header h set to want.
func wantHeader(t *testing.T, r apicheck.Response, h, want string) {
	t.Helper()
	if got := r.Header.Get(h); got != want {
		t.Errorf("%s %q, want %q", h, got, want)
	}
}

func getStats(t *testing.T, s *service) stats {
	t.Helper()
	r := apicheck.Get(t, s.base+"/stats")
	mustStatus(t, "GET /stats", r, http.StatusOK)
	return apicheck.Decode[stats](t, r)
}

func resetStats(t *testing.T, s *service) {
	t.Helper()
	mustStatus(t, "POST /stats/reset", apicheck.Call(t, http.MethodPost, s.base+"/stats/reset", "", nil), http.StatusNoContent)
}

// burst sends n GETs of url at once and returns their answers. It opens
// the n connections first, so that the requests leave together instead of
// one behind each TCP handshake.
func burst(t *testing.T, base, path string, n int) []apicheck.Response {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	fire := func(url string) []apicheck.Response {
		answers := make([]apicheck.Response, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				<-start
				answers[i], errs[i] = apicheck.Do(c, req)
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
	r := apicheck.Call(t, http.MethodPost, s.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 1}`))
	mustStatus(t, "POST /roles/1/permissions", r, http.StatusOK)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
