package load

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
)

func coarse(cfg Config, tick time.Duration) Config {
	cfg.Pacing, cfg.Tick = Coarse, tick
	return cfg
}

// The loop reads a response up to a tick after it arrived; the kernel's
// receive stamp keeps that delay out of the latency.
func TestCoarseTimesResponsesByArrivalNotByRead(t *testing.T) {
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	const tick = 50 * time.Millisecond
	s := run(t, coarse(Config{Targets: []Target{{URL: srv.URL}}, Connections: 2, Pacer: constant(t, 20, time.Second)}, tick), Options{})
	if s.Successes != 20 {
		t.Fatalf("successes %d errors %v, want 20", s.Successes, s.Errors)
	}
	t.Logf("uncorrected p50 %.2f ms max %.2f ms with a %v tick", s.Uncorrected.P50, s.Uncorrected.Max, tick)
	if s.Uncorrected.Min < 2 {
		t.Fatalf("uncorrected min %.2f ms: shorter than the server's 2 ms", s.Uncorrected.Min)
	}
	if s.Uncorrected.P50 > 25 {
		t.Fatalf("uncorrected p50 %.2f ms: responses timed when read at the next %v tick, not when they arrived", s.Uncorrected.P50, tick)
	}
}

// With every connection busy the loop waits on the sockets, not the tick:
// one connection must carry far more than one request per tick.
func TestCoarseBusyConnectionsDoNotCapTheRate(t *testing.T) {
	srv := okServer(t, nil)
	s := run(t, coarse(Config{Targets: []Target{{URL: srv.URL}}, Connections: 1, Pacer: constant(t, 1000, 500*time.Millisecond)}, 25*time.Millisecond), Options{})
	if s.Requests != 500 || s.Successes != 500 || s.Unsent != 0 {
		t.Fatalf("requests %d successes %d unsent %d, want 500 sent and answered", s.Requests, s.Successes, s.Unsent)
	}
	// A loop that waited for the tick would need 500 ticks, 12.5 s.
	if s.DurationS > 5 {
		t.Fatalf("500 requests took %.1f s: the tick capped the rate", s.DurationS)
	}
}

func TestCoarseReadsEveryResponseShape(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { w.Write(big) })
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, _ *http.Request) {
		for i := range 5 {
			fmt.Fprintf(w, "part%d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		fmt.Fprint(w, "bye")
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "got %d", n)
	})
	srv := okServer(t, mux.ServeHTTP)
	tests := []struct {
		name   string
		target Target
		minIn  int64 // bytes in, at least
	}{
		{"one megabyte", Target{URL: srv.URL + "/big"}, 1 << 20},
		{"chunked", Target{URL: srv.URL + "/chunked", ExpectBody: []byte("part0;part1;part2;part3;part4;")}, 30},
		{"connection close", Target{URL: srv.URL + "/close", ExpectBody: []byte("bye")}, 3},
		{"no content", Target{URL: srv.URL + "/empty", ExpectStatus: mustStatus(t, "204")}, 10},
		{"head", Target{Method: "HEAD", URL: srv.URL + "/big"}, 10},
		{"eight megabyte upload", Target{Method: "POST", URL: srv.URL + "/upload", Body: bytes.Repeat([]byte("y"), 8<<20), ExpectBody: []byte(fmt.Sprintf("got %d", 8<<20))}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, coarse(Config{Targets: []Target{tt.target}, Connections: 2, Pacer: constant(t, 40, 250*time.Millisecond)}, DefaultTick), Options{})
			if s.Requests != 10 || s.Successes != 10 {
				t.Fatalf("requests %d successes %d errors %v, want 10 answered", s.Requests, s.Successes, s.Errors)
			}
			if in := s.BytesIn / s.Requests; in < tt.minIn {
				t.Fatalf("%d bytes in per response, want at least %d", in, tt.minIn)
			}
		})
	}
}

func mustStatus(t *testing.T, s string) StatusSet {
	t.Helper()
	set, err := ParseStatusSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A server that answers with something that is not HTTP costs that request,
// not the run.
func TestCoarseMalformedResponseIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if strings.TrimSpace(line) == "" {
						io.WriteString(c, "HTTP/1.1 abc nonsense\r\n\r\n")
					}
				}
			}()
		}
	}()
	s := run(t, coarse(Config{Targets: []Target{{URL: "http://" + ln.Addr().String() + "/"}}, Connections: 2, Pacer: constant(t, 40, 250*time.Millisecond)}, DefaultTick), Options{})
	if s.Requests != 10 || s.Successes != 0 || len(s.Errors) == 0 {
		t.Fatalf("requests %d successes %d errors %v, want 10 failed", s.Requests, s.Successes, s.Errors)
	}
}

// One stopwatch: the same server timed by both models and both pacings
// gives the same latency, corrected and not. A closed model that counted
// its think time, or an open one its wake-ups, would disagree by far more
// than the tolerance, max(1 ms, 50%). The models take turns for three
// rounds and each is judged by its median p50, so that a moment when the
// busy machine starved one of them does not decide.
func TestBothModelsTimeAlike(t *testing.T) {
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	target := []Target{{URL: srv.URL}}
	models := []struct {
		name string
		cfg  func() Config
	}{
		{"closed", func() Config {
			return Config{Targets: target, Users: 1, Iterations: 30, Think: Think{Min: 10 * time.Millisecond, Max: 10 * time.Millisecond}}
		}},
		{"precise", func() Config {
			return Config{Targets: target, Connections: 2, Pacer: constant(t, 80, 375*time.Millisecond)}
		}},
		{"coarse", func() Config {
			return coarse(Config{Targets: target, Connections: 2, Pacer: constant(t, 80, 375*time.Millisecond)}, DefaultTick)
		}},
	}
	p50s := make([][2][]float64, len(models)) // per model: corrected, uncorrected
	for range 3 {
		for i, m := range models {
			s := run(t, m.cfg(), Options{})
			if s.Successes != 30 {
				t.Fatalf("%s: successes %d errors %v, want 30", m.name, s.Successes, s.Errors)
			}
			if s.Clock != metrics.KernelReceiveStamp || s.Unstamped != 0 {
				t.Fatalf("%s: clock %q with %d answers unstamped, want every answer on the kernel's receive stamp", m.name, s.Clock, s.Unstamped)
			}
			if s.Uncorrected.P50 < 2 {
				t.Fatalf("%s: uncorrected p50 %.3f ms, shorter than the server's 2 ms", m.name, s.Uncorrected.P50)
			}
			p50s[i][0] = append(p50s[i][0], s.Latency.P50)
			p50s[i][1] = append(p50s[i][1], s.Uncorrected.P50)
		}
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	for k, what := range []string{"p50", "uncorrected p50"} {
		closed := median(p50s[0][k])
		for i, m := range models[1:] {
			got := median(p50s[i+1][k])
			t.Logf("%s %s %.3f ms, closed %.3f ms", m.name, what, got, closed)
			if math.Abs(got-closed) > max(1, 0.5*min(got, closed)) {
				t.Errorf("%s %s %.3f ms, closed %.3f ms: not the same stopwatch", m.name, what, got, closed)
			}
		}
	}
}

// Users beyond the connections wait for one with their slot kept: the wait
// counts in the corrected latency, as queueing does in the open model, and
// not in the service time.
func TestClosedUsersQueueInCorrectedLatencyOnly(t *testing.T) {
	srv := okServer(t, func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	s := run(t, Config{Targets: []Target{{URL: srv.URL}}, Users: 4, Connections: 1, Iterations: 10}, Options{})
	if s.Successes != 40 {
		t.Fatalf("successes %d errors %v, want 40", s.Successes, s.Errors)
	}
	// Four users on one connection: each waits for the other three.
	t.Logf("p50 %.2f ms, uncorrected %.2f ms", s.Latency.P50, s.Uncorrected.P50)
	if s.Latency.P50 < 2.5*s.Uncorrected.P50 {
		t.Fatalf("p50 %.2f ms, uncorrected %.2f ms: the wait for the connection is not where it belongs", s.Latency.P50, s.Uncorrected.P50)
	}
}

// Precise pacing wakes once for the arrivals within its window behind the
// first: with one every half window, three share a wake-up.
func TestPreciseWakeServesTheArrivalsWithinTheWindow(t *testing.T) {
	rate := float64(time.Second) / float64(preciseWindow/2)
	ref := constant(t, rate, time.Second)
	var slots []int64
	for range 3 {
		off, _ := ref.Next()
		slots = append(slots, int64(off))
	}
	s := &schedule{e: &Engine{cfg: Config{Pacer: constant(t, rate, time.Second)}}}
	if first, ok := s.next(); !ok || first != slots[0] {
		t.Fatalf("first slot %d, want %d", first, slots[0])
	}
	if got := s.wake(0); got != slots[0] {
		t.Fatalf("wake without a window at %d, want the first slot %d", got, slots[0])
	}
	if got := s.wake(int64(preciseWindow)); got != slots[2] {
		t.Fatalf("wake at %d, want the third slot %d (slots %v)", got, slots[2], slots)
	}
	for _, want := range slots {
		if tk, _ := s.take(0, 0); tk.intended != want {
			t.Fatalf("took %d, want %d: reading ahead lost or reordered an arrival", tk.intended, want)
		}
	}
}
