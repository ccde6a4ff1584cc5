package load

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/pacer"
	"github.com/msbench/msbench/internal/records"
)

func okServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Server-Timing", "app;dur=1.5, db;dur=0.25;desc=\"q\"")
			fmt.Fprint(w, "hello")
		}
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// near compares at the histograms' precision of 3 significant digits.
func near(got, want float64) bool { return got >= want*0.999 && got <= want*1.001 }

func run(t *testing.T, cfg Config, opts Options) metrics.Summary {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Connections == 0 {
		cfg.Connections = max(cfg.Users, 1)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func constant(t *testing.T, rate float64, d time.Duration) *pacer.Pacer {
	t.Helper()
	p, err := pacer.Constant(rate, d, pacer.Uniform, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClosedModelCounts(t *testing.T) {
	srv := okServer(t, nil)
	target := []Target{{URL: srv.URL}}
	tests := []struct {
		name string
		cfg  Config
		want int64
	}{
		{"shared request budget", Config{Targets: target, Users: 7, MaxRequests: 503}, 503},
		{"iterations per user", Config{Targets: target, Users: 3, Iterations: 11}, 33},
		{"users share fewer connections", Config{Targets: target, Users: 8, Connections: 2, Iterations: 5}, 40},
		{"think time", Config{Targets: target, Users: 2, Iterations: 3, Think: Think{Min: 10 * time.Millisecond, Max: 20 * time.Millisecond}}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, tt.cfg, Options{})
			if s.Requests != tt.want || s.Successes != tt.want {
				t.Fatalf("requests %d, successes %d, want %d; errors %v", s.Requests, s.Successes, tt.want, s.Errors)
			}
			if s.Model != "closed" || !s.Valid {
				t.Fatalf("model %q valid %v", s.Model, s.Valid)
			}
			if got := s.ServerTiming["app"]; got.Count != tt.want || !near(got.P50, 1.5) {
				t.Fatalf("server timing app = %+v, want %d samples of 1.5 ms", got, tt.want)
			}
		})
	}
}

func TestClosedModelThinkTimePacesUsers(t *testing.T) {
	srv := okServer(t, nil)
	start := time.Now()
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 2, Iterations: 4, Think: Think{Min: 50 * time.Millisecond, Max: 50 * time.Millisecond}}, Options{})
	// Four requests per user with three pauses between them (none after
	// the last) take at least 150 ms.
	if el := time.Since(start); el < 150*time.Millisecond || s.Requests != 8 {
		t.Fatalf("%d requests in %v, want 8 in at least 150 ms", s.Requests, el)
	}
}

// TestProgressShowsRequestsInFlight: while a server holds every user's
// request, progress counts them in flight and none answered; once it
// answers, never more are in flight than there are users, though the
// answers reach the aggregator a batch at a time.
func TestProgressShowsRequestsInFlight(t *testing.T) {
	release := make(chan struct{})
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) { <-release })
	const users, requests = 4, 2000
	var once sync.Once
	var mu sync.Mutex
	var held Snapshot
	most := int64(0)
	show := func(s Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		most = max(most, s.InFlight)
		if s.InFlight == users {
			once.Do(func() { held = s; close(release) })
		}
	}
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: users, MaxRequests: requests, Timeout: time.Minute},
		Options{Progress: show, ProgressEvery: time.Millisecond})
	mu.Lock()
	defer mu.Unlock()
	if held.InFlight != users || held.Requests != 0 {
		t.Errorf("while the server held them: %d answered, %d in flight; want 0 and %d", held.Requests, held.InFlight, users)
	}
	if most > users {
		t.Errorf("progress showed %d in flight; %d users can have no more than %d", most, users, users)
	}
	if s.Requests != requests || s.Successes != requests {
		t.Errorf("%d requests, %d answered 200; want %d and %d", s.Requests, s.Successes, requests, requests)
	}
}

func TestClosedModelDuration(t *testing.T) {
	srv := okServer(t, nil)
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 2, Duration: 300 * time.Millisecond, Think: Think{Min: 10 * time.Millisecond, Max: 10 * time.Millisecond}}, Options{})
	// Each user does at most one request per 10 ms pause.
	if s.Requests < 2 || s.Requests > 2*31 {
		t.Fatalf("%d requests in 300 ms with 10 ms pauses and 2 users", s.Requests)
	}
	// Users stop rather than pause past the deadline, so a little under.
	if s.DurationS < 0.25 || s.DurationS > 5 {
		t.Fatalf("run took %.2f s, want about 0.3 s", s.DurationS)
	}
}

// eachPacing runs an open-model test under both pacings; the test sets
// everything in cfg but the pacing.
func eachPacing(t *testing.T, test func(t *testing.T, with func(Config) Config)) {
	for _, p := range []struct {
		name   string
		pacing Pacing
		tick   time.Duration
	}{{"precise", Precise, 0}, {"coarse", Coarse, DefaultTick}} {
		t.Run(p.name, func(t *testing.T) {
			test(t, func(c Config) Config {
				c.Pacing, c.Tick = p.pacing, p.tick
				return c
			})
		})
	}
}

// An open load sends its schedule, on time, up to its request count; the
// host is named as a resolver would be asked for it.
func TestOpenModelRate(t *testing.T) {
	srv := okServer(t, nil)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	target := []Target{{URL: "http://localhost:" + port + "/"}}
	eachPacing(t, func(t *testing.T, with func(Config) Config) {
		s := run(t, with(Config{Targets: target, Connections: 10, Pacer: constant(t, 400, time.Second)}), Options{})
		if s.Requests != 400 || s.Unsent != 0 || s.Successes != 400 {
			t.Fatalf("sent %d (%d unsent, %d successes), want 400", s.Requests, s.Unsent, s.Successes)
		}
		if !s.AchievedRateOK || s.TargetRPS != 400 {
			t.Fatalf("achieved %.1f of %.1f req/s, ok=%v", s.AchievedRPS, s.TargetRPS, s.AchievedRateOK)
		}
		if s.DurationS < 0.99 {
			t.Fatalf("400 requests at 400/s took %.3f s: sent ahead of schedule", s.DurationS)
		}
		if got := s.ServerTiming["app"]; got.Count != 400 || !near(got.P50, 1.5) {
			t.Fatalf("server timing app = %+v, want 400 samples of 1.5 ms", got)
		}
		if s = run(t, with(Config{Targets: target, Connections: 4, Pacer: constant(t, 1000, time.Second), MaxRequests: 123}), Options{}); s.Requests != 123 || s.Unsent != 0 {
			t.Fatalf("sent %d (%d unsent), want the 123 asked for", s.Requests, s.Unsent)
		}
	})
}

// A server that stalls once for a second: arrivals keep their schedule, so
// the stall shows in corrected latency, while the few requests that were on
// the wire are all a closed-loop tool would have seen.
func TestOpenModelStallShowsInCorrectedLatencyOnly(t *testing.T) {
	eachPacing(t, testStall)
}

func testStall(t *testing.T, with func(Config) Config) {
	var gate sync.RWMutex
	var stalled atomic.Bool
	var served atomic.Int64
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if served.Add(1) == 1500 && stalled.CompareAndSwap(false, true) {
			gate.Lock()
			time.Sleep(time.Second)
			gate.Unlock()
		}
		gate.RLock()
		gate.RUnlock()
		fmt.Fprint(w, "ok")
	})
	s := run(t, with(Config{Targets: []Target{{URL: srv.URL}}, Connections: 2, Pacer: constant(t, 1000, 4*time.Second)}), Options{})
	if !stalled.Load() {
		t.Fatal("the server never stalled")
	}
	if s.Requests != 4000 || s.Errors == nil || len(s.Errors) != 0 {
		t.Fatalf("requests %d errors %v, want 4000 and none", s.Requests, s.Errors)
	}
	t.Logf("corrected p99 %.1f ms, uncorrected p99 %.1f ms, max lag %.1f ms", s.Latency.P99, s.Uncorrected.P99, s.ScheduleLag.Max)
	if s.Latency.P99 < 500 {
		t.Errorf("corrected p99 %.1f ms hides a 1 s stall", s.Latency.P99)
	}
	if s.Uncorrected.P99 > 250 {
		t.Errorf("uncorrected p99 %.1f ms: only the requests on the wire should see the stall", s.Uncorrected.P99)
	}
	if s.Uncorrected.Max < 900 {
		t.Errorf("uncorrected max %.1f ms: the stalled request should show it", s.Uncorrected.Max)
	}
	if s.LateStarts < 500 {
		t.Errorf("%d late starts: the arrivals during the stall were late", s.LateStarts)
	}
}

// In both models, a timed-out request is an error whose service time is
// the timeout; in the closed model the user's next request follows it.
func TestTimeoutIsAnErrorWithLatencyTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := okServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	target := []Target{{URL: srv.URL}}
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{Targets: target, Users: 2, Iterations: 2}},
		{"precise", Config{Targets: target, Connections: 4, Pacer: constant(t, 20, 200*time.Millisecond)}},
		{"coarse", coarse(Config{Targets: target, Connections: 4, Pacer: constant(t, 20, 200*time.Millisecond)}, DefaultTick)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Timeout = 150 * time.Millisecond
			s := run(t, tt.cfg, Options{})
			if s.Requests != 4 || s.Errors["timeout"] != 4 {
				t.Fatalf("requests %d errors %v, want 4 timeouts", s.Requests, s.Errors)
			}
			if s.Uncorrected.Min < 149 || s.Uncorrected.Max > 151 {
				t.Fatalf("timed-out latency %.1f-%.1f ms, want the 150 ms timeout", s.Uncorrected.Min, s.Uncorrected.Max)
			}
		})
	}
}

func TestChecksCountFailuresByReason(t *testing.T) {
	var n atomic.Int64
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 1:
			fmt.Fprint(w, "wrong")
		default:
			fmt.Fprint(w, "expected text")
		}
	})
	s := run(t, Config{Targets: []Target{{URL: srv.URL, ExpectBody: []byte("expected")}}, Users: 1, MaxRequests: 100}, Options{})
	if s.Successes != 50 || s.Errors["status 503"] != 25 || s.Errors["body mismatch"] != 25 {
		t.Fatalf("successes %d errors %v", s.Successes, s.Errors)
	}
	if s.StatusCodes["200"] != 75 || s.StatusCodes["503"] != 25 {
		t.Fatalf("status codes %v", s.StatusCodes)
	}
}

func TestMalformedServerTimingIsCountedNotFatal(t *testing.T) {
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("Server-Timing", "good;dur=2, bad;dur=x, ;dur=1")
		w.Header().Add("Server-Timing", "second;dur=3")
		fmt.Fprint(w, "ok")
	})
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 1, MaxRequests: 10}, Options{})
	if s.Successes != 10 || s.ServerTimingMalformed != 20 {
		t.Fatalf("successes %d malformed %d, want 10 and 20", s.Successes, s.ServerTimingMalformed)
	}
	if s.ServerTiming["good"].Count != 10 || !near(s.ServerTiming["second"].P50, 3) {
		t.Fatalf("server timing %+v", s.ServerTiming)
	}
}

// The server disappears mid-run: the load goes on, counting errors.
func TestServerGoingAwayCountsErrors(t *testing.T) {
	eachPacing(t, testServerGoingAway)
}

func testServerGoingAway(t *testing.T, with func(Config) Config) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		fmt.Fprint(w, "ok")
	})}
	go srv.Serve(ln)
	time.AfterFunc(300*time.Millisecond, func() { srv.Close() })
	s := run(t, with(Config{Targets: []Target{{URL: "http://" + ln.Addr().String() + "/"}}, Connections: 4, Pacer: constant(t, 200, time.Second)}), Options{})
	if s.Requests != 200 {
		t.Fatalf("sent %d, want all 200 scheduled", s.Requests)
	}
	failed := s.Requests - s.Successes
	if s.Successes == 0 || failed == 0 || s.Successes > served.Load() {
		t.Fatalf("successes %d failed %d served %d errors %v", s.Successes, failed, served.Load(), s.Errors)
	}
	if s.Errors["connection refused"] == 0 {
		t.Fatalf("errors %v, want connection refused among them", s.Errors)
	}
}

// Every request is one row, in both models and both transports: as many
// rows as the summary counts, sequence numbers without a gap, and times in
// order (never sent before its slot).
func TestRecordsFile(t *testing.T) {
	srv := okServer(t, nil)
	tlsSrv := httptest.NewTLSServer(okServer(t, nil).Config.Handler)
	t.Cleanup(tlsSrv.Close)
	home := []Target{{Name: "home", URL: srv.URL}}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{Targets: home, Users: 3, MaxRequests: 300}},
		{"closed, users queue for connections", Config{Targets: home, Users: 6, Connections: 2, MaxRequests: 300}},
		{"precise", Config{Targets: home, Connections: 3, Pacer: constant(t, 1000, 300*time.Millisecond)}},
		{"coarse", coarse(Config{Targets: home, Connections: 3, Pacer: constant(t, 1000, 300*time.Millisecond)}, DefaultTick)},
		{"https closed", Config{Targets: []Target{{Name: "home", URL: tlsSrv.URL}}, Users: 3, MaxRequests: 300, Insecure: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Timeout = 5 * time.Second
			tt.cfg.Connections = max(tt.cfg.Connections, tt.cfg.Users)
			testRecords(t, tt.cfg)
		})
	}
}

// recorded runs a load into a records file and reads it back.
func recorded(t *testing.T, cfg Config) (metrics.Summary, []records.Row) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return runRecorded(t, e, Options{})
}

// runRecorded runs e with opts into a records file and reads it back.
func runRecorded(t *testing.T, e *Engine, opts Options) (metrics.Summary, []records.Row) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.parquet")
	w, err := records.Create(path, e.Names(), e.TargetNames())
	if err != nil {
		t.Fatal(err)
	}
	opts.Sink = w
	s, err := e.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := records.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, rows
}

func testRecords(t *testing.T, cfg Config) {
	s, rows := recorded(t, cfg)
	if int64(len(rows)) != s.Requests || s.Requests != 300 {
		t.Fatalf("%d rows for %d requests, want 300", len(rows), s.Requests)
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		seen[r.Seq] = true
		if r.Target != "home" || r.Status != 200 || r.Error != "" || r.BytesIn <= 5 || r.BytesOut <= 0 {
			t.Fatalf("row %+v", r)
		}
		if r.Sent < r.Intended || r.LatencyMs <= 0 || r.LatencyMs < r.ServiceMs {
			t.Fatalf("times out of order: %+v", r)
		}
		if int(r.Worker) >= max(cfg.Users, cfg.Connections) {
			t.Fatalf("worker %d of %d users and %d connections", r.Worker, cfg.Users, cfg.Connections)
		}
		if len(r.ServerTiming) != 2 || r.ServerTiming[0].Name != "app" || r.ServerTiming[1].Ms != 0.25 {
			t.Fatalf("server timing %+v", r.ServerTiming)
		}
	}
	for i := range int64(300) {
		if !seen[i] {
			t.Fatalf("sequence number %d missing", i)
		}
	}
}

func TestTagHeaderIsRecorded(t *testing.T) {
	var n atomic.Int64
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Data-Version", fmt.Sprint(n.Add(1)))
	})
	_, rows := recorded(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 1, Connections: 1, MaxRequests: 20, Timeout: time.Second, TagHeader: "X-Data-Version"})
	for _, r := range rows {
		// One user: the n-th request got version n.
		if r.Tag != r.Seq+1 {
			t.Fatalf("request %d has tag %d", r.Seq, r.Tag)
		}
	}
}

func TestTargetMix(t *testing.T) {
	var a, b atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(http.ResponseWriter, *http.Request) { a.Add(1) })
	mux.HandleFunc("/b", func(http.ResponseWriter, *http.Request) { b.Add(1) })
	srv := okServer(t, mux.ServeHTTP)
	run(t, Config{Targets: []Target{{URL: srv.URL + "/a", Weight: 3}, {URL: srv.URL + "/b", Weight: 1}}, Users: 2, MaxRequests: 400}, Options{})
	if a.Load() != 300 || b.Load() != 100 {
		t.Fatalf("a=%d b=%d, want 300 and 100", a.Load(), b.Load())
	}
}

func TestNewRejects(t *testing.T) {
	good := []Target{{URL: "http://127.0.0.1:1/"}}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no target", Config{Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1}},
		{"unbounded", Config{Targets: good, Users: 1, Connections: 1, Timeout: time.Second}},
		{"no users", Config{Targets: good, Connections: 1, Timeout: time.Second, MaxRequests: 1}},
		{"bad scheme", Config{Targets: []Target{{URL: "ftp://x/"}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1}},
		{"two hosts", Config{Targets: []Target{{URL: "http://a/"}, {URL: "http://b/"}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1}},
		{"think range reversed", Config{Targets: good, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1, Think: Think{Min: 2, Max: 1}}},
		{"coarse pacing without a tick", Config{Targets: good, Connections: 1, Timeout: time.Second, Pacer: constant(t, 1, time.Second), Pacing: Coarse}},
		{"negative lead", Config{Targets: good, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1, Lead: -time.Second}},
		{"lead in the open model", Config{Targets: good, Connections: 1, Timeout: time.Second, Pacer: constant(t, 1, time.Second), Lead: time.Second}},
		{"lead with iterations", Config{Targets: good, Users: 1, Connections: 1, Timeout: time.Second, Iterations: 3, Lead: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

// https goes through the same loop, in both models and both pacings; an
// unverifiable certificate is a counted error unless asked to accept it.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") }))
	t.Cleanup(srv.Close)
	target := []Target{{URL: srv.URL, ExpectBody: []byte("hello")}}
	tests := []struct {
		name      string
		cfg       Config
		successes int64
	}{
		{"open model", Config{Targets: target, Connections: 4, Insecure: true, Pacer: constant(t, 200, 500*time.Millisecond)}, 100},
		{"coarse pacing", coarse(Config{Targets: target, Connections: 4, Insecure: true, Pacer: constant(t, 200, 500*time.Millisecond)}, DefaultTick), 100},
		{"closed model", Config{Targets: target, Users: 2, Insecure: true, Iterations: 50}, 100},
		{"certificate not trusted", Config{Targets: target, Users: 2, Iterations: 5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, tt.cfg, Options{})
			if s.Requests == 0 || s.Successes != tt.successes {
				t.Fatalf("requests %d successes %d errors %v, want %d successes", s.Requests, s.Successes, s.Errors, tt.successes)
			}
		})
	}
}

// A load whose context is done before it starts sends nothing: a run
// interrupted between two loads must not wait out a burst it had no
// reason to send.
func TestCancelledBeforeTheStartSendsNothing(t *testing.T) {
	var got atomic.Int64
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) { got.Add(1) })
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{Users: 20, MaxRequests: 1000}},
		{"open", Config{Pacer: constant(t, 1000, time.Second), Connections: 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got.Store(0)
			c.cfg.Targets, c.cfg.Timeout = []Target{{URL: srv.URL}}, 5*time.Second
			if c.cfg.Connections == 0 {
				c.cfg.Connections = c.cfg.Users
			}
			e, err := New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			s, _ := e.Run(ctx, Options{})
			if s.Requests != 0 || got.Load() != 0 {
				t.Errorf("sent %d, the server saw %d, want none", s.Requests, got.Load())
			}
		})
	}
}

// A lead's requests reach the server but no record, count or number of
// the measured load: it is the measured load that starts where the lead
// ends, with its own count and its numbers from 0.
func TestLeadIsSentButNotMeasured(t *testing.T) {
	var served atomic.Int64
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		fmt.Fprint(w, "hello")
	})
	cfg := Config{Targets: []Target{{Name: "home", URL: srv.URL}}, Users: 4, Connections: 4, MaxRequests: 300, Lead: 150 * time.Millisecond, Timeout: 5 * time.Second}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	var at atomic.Int64
	began := time.Now()
	s, rows := runRecorded(t, e, Options{Measuring: func() { calls.Add(1); at.Store(time.Now().UnixNano()) }})
	if s.Requests != 300 || len(rows) != 300 || !s.Valid {
		t.Fatalf("measured %d requests in %d rows (valid %v), want 300", s.Requests, len(rows), s.Valid)
	}
	// Each user's first request is meant for time 0, inside the lead.
	if got := served.Load(); got < s.Requests+int64(cfg.Users) {
		t.Fatalf("the server answered %d requests, want the %d measured and at least one per user in the lead", got, s.Requests)
	}
	if s.StartedAt.Before(began.Add(cfg.Lead)) {
		t.Fatalf("the measured load starts at %v, within the lead of %v from %v", s.StartedAt, cfg.Lead, began)
	}
	if calls.Load() != 1 || at.Load() < s.StartedAt.UnixNano() {
		t.Fatalf("Measuring called %d times, at %d, for a load measured from %d", calls.Load(), at.Load(), s.StartedAt.UnixNano())
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		seen[r.Seq] = true
		if r.Intended < s.StartedAt.UnixNano() {
			t.Fatalf("request %d was meant for %d, before the measured load's start %d", r.Seq, r.Intended, s.StartedAt.UnixNano())
		}
	}
	for i := range int64(300) {
		if !seen[i] {
			t.Fatalf("sequence number %d missing", i)
		}
	}
}

// The users send on through the lead's end: none is stopped and started
// again on a connection of its own.
func TestLeadThenDuration(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") }))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	cfg := Config{Targets: []Target{{URL: srv.URL}}, Users: 3, Duration: 200 * time.Millisecond, Lead: 100 * time.Millisecond, Think: Think{Min: 5 * time.Millisecond, Max: 10 * time.Millisecond}}
	s := run(t, cfg, Options{})
	if s.Requests == 0 || !s.Valid {
		t.Fatalf("measured %+v", s)
	}
	if conns.Load() != int64(cfg.Users) {
		t.Fatalf("%d connections for %d users: a user started afresh after the lead", conns.Load(), cfg.Users)
	}
}

// A load that ends past its lead before the lead's timer fires (a busy
// machine's fires late, and a slice of a few requests to a fast server
// is over in milliseconds) measured what it sent: the start waits for the
// timer, not the other way round.
func TestLeadTimerLaterThanTheLoad(t *testing.T) {
	srv := okServer(t, nil)
	e, err := New(Config{Targets: []Target{{URL: srv.URL}}, Users: 1, Connections: 1, Timeout: 5 * time.Second, MaxRequests: 3, Lead: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	late := 300 * time.Millisecond
	e.afterFunc = func(d time.Duration, f func()) *time.Timer { return time.AfterFunc(d+late, f) }
	var calls atomic.Int64
	s, err := e.Run(context.Background(), Options{Measuring: func() { calls.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Valid || s.Requests != 3 || calls.Load() != 1 {
		t.Fatalf("Measuring called %d times; summary %+v", calls.Load(), s)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "the CPU read for the measured load undercounts it") {
		t.Fatalf("warnings %q, want the late start's", s.Warnings)
	}
}

// A load cut short in its lead measured nothing, and says so.
func TestCancelledInTheLead(t *testing.T) {
	srv := okServer(t, nil)
	e, err := New(Config{Targets: []Target{{URL: srv.URL}}, Users: 2, Connections: 2, Timeout: time.Second, Duration: time.Second, Lead: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	called := false
	s, err := e.Run(ctx, Options{Measuring: func() { called = true }})
	if err != nil {
		t.Fatal(err)
	}
	if called || s.Valid || s.Requests != 0 || len(s.Warnings) == 0 {
		t.Fatalf("Measuring called: %v; summary %+v", called, s)
	}
}
