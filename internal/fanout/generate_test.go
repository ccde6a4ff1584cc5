package fanout

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
)

// generate runs n generators of spec at once, in process, from one start,
// and merges their outputs.
func generate(t *testing.T, spec loadspec.Spec, n int) (metrics.Summary, []Generator, results.StepDir, time.Time) {
	t.Helper()
	start := time.Now().Add(500 * time.Millisecond).Round(0)
	specs, err := Specs(spec, n, start, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]results.StepDir, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		dirs[k] = results.StepDir(filepath.Join(t.TempDir(), fmt.Sprint("gen", k)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[k] = Generate(context.Background(), specs[k], dirs[k], nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	out := results.StepDir(t.TempDir())
	m, err := Merge(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	return m.Summary, m.Generators, out, start
}

func server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	t.Cleanup(srv.Close)
	return srv
}

// TestGeneratorsOpenModel: two generators on this machine send one
// schedule at a fixed rate from one start; merged, the records are every
// request once, at the schedule's very intended times.
func TestGeneratorsOpenModel(t *testing.T) {
	srv := server(t)
	const rate, dur = 200.0, time.Second
	spec := loadspec.Spec{Open: true, Rate: rate, Duration: dur, Connections: 8, Timeout: 5 * time.Second, Targets: []load.Target{{URL: srv.URL}}}
	s, gens, out, start := generate(t, spec, 2)
	rows, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != s.Requests || s.Requests == 0 {
		t.Fatalf("%d records for %d requests", len(rows), s.Requests)
	}
	whole, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	schedule := offsets(whole.Pacer)
	if s.Requests+s.Unsent != int64(len(schedule)) || s.Scheduled != int64(len(schedule)) {
		t.Errorf("%d sent and %d unsent of a schedule of %d (scheduled %d)", s.Requests, s.Unsent, len(schedule), s.Scheduled)
	}
	inSchedule := map[time.Duration]bool{}
	for _, off := range schedule {
		inSchedule[off] = true
	}
	seen := map[int64]bool{}
	for i, r := range rows {
		if seen[r.Seq] {
			t.Fatalf("sequence number %d twice", r.Seq)
		}
		seen[r.Seq] = true
		off := time.Duration(r.Intended - start.UnixNano())
		if !inSchedule[off] {
			t.Fatalf("row %d intended %v after the start, not an arrival of the schedule", i, off)
		}
		// With every arrival sent, a request's number is its index in
		// the one schedule.
		if s.Unsent == 0 && off != schedule[r.Seq] {
			t.Fatalf("row %d, number %d, intended at %v; the schedule's arrival %d is at %v", i, r.Seq, off, r.Seq, schedule[r.Seq])
		}
	}
	if s.TargetRPS != rate {
		t.Errorf("target %v req/s, want the %v asked", s.TargetRPS, rate)
	}
	// The span ends at the last answer, a slot before the schedule's end
	// at best, so the throughput is at most the rate and a slot's worth;
	// one-sided below, where a busy machine may send late.
	if s.ThroughputRPS > rate*float64(len(schedule))/float64(len(schedule)-1) || s.ThroughputRPS < rate/2 || s.AchievedRPS < rate/2 {
		t.Errorf("throughput %.1f req/s, achieved %.1f, asked %v", s.ThroughputRPS, s.AchievedRPS, rate)
	}
	if !s.StartedAt.Equal(start) {
		t.Errorf("merged step started at %s, want the agreed %s", s.StartedAt, start)
	}
	if len(gens) != 2 || gens[0].Requests+gens[1].Requests != s.Requests || gens[0].Requests == 0 || gens[1].Requests == 0 {
		t.Errorf("generators sent %+v", gens)
	}
}

// TestGeneratorsClosedModel: users split between two generators, each
// user's requests under a worker number of its own.
func TestGeneratorsClosedModel(t *testing.T) {
	srv := server(t)
	spec := loadspec.Spec{Users: 5, Iterations: 4, Timeout: 5 * time.Second, Targets: []load.Target{{URL: srv.URL}}}
	s, gens, out, _ := generate(t, spec, 2)
	rows, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 20 || len(rows) != 20 || s.Users != 5 || s.Successes != 20 {
		t.Fatalf("%d requests (%d ok), %d records, %d users; want 20 from 5 users", s.Requests, s.Successes, len(rows), s.Users)
	}
	perWorker := map[int32]int{}
	seen := map[int64]bool{}
	for _, r := range rows {
		perWorker[r.Worker]++
		if seen[r.Seq] {
			t.Fatalf("sequence number %d twice", r.Seq)
		}
		seen[r.Seq] = true
	}
	for w := range int32(5) {
		if perWorker[w] != 4 {
			t.Errorf("user %d sent %d requests, want its 4 iterations: %v", w, perWorker[w], perWorker)
		}
	}
	if gens[0].Workers != [2]int64{0, 3} || gens[1].Workers != [2]int64{3, 5} {
		t.Errorf("workers %v and %v, want [0 3] and [3 5]", gens[0].Workers, gens[1].Workers)
	}
}

func TestGenerateRefuses(t *testing.T) {
	srv := server(t)
	spec := loadspec.Spec{Users: 2, Iterations: 1, Targets: []load.Target{{URL: srv.URL}}}
	specs, err := Specs(spec, 1, time.Now(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"no start for one of several", func(s *Spec) { s.Start, s.Share = time.Time{}, Share{0, 2} }, "no start instant"},
		{"a start too far ahead", func(s *Spec) { s.Start = time.Now().Add(time.Hour) }, "more than the 10m0s"},
		{"a start long past", func(s *Spec) { s.Start = time.Now().Add(-time.Minute) }, "after the agreed start"},
		{"a target outside", func(s *Spec) { s.Load.Targets[0].URL = "http://192.0.2.1/" }, "neither on this machine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := specs[0]
			s.Start = time.Now().Add(100 * time.Millisecond)
			s.Load.Targets = []Target{s.Load.Targets[0]}
			tt.edit(&s)
			dir := results.StepDir(t.TempDir())
			if _, err := Generate(context.Background(), s, dir, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			if _, err := dir.ReadSummary(); err == nil {
				t.Error("a refused generator wrote a summary")
			}
		})
	}
}

// A load sent whole by one generator needs no agreed start: it begins when
// its spec arrives.
func TestGenerateAloneStartsAtOnce(t *testing.T) {
	srv := server(t)
	specs, err := Specs(loadspec.Spec{Users: 2, Iterations: 3, Targets: []load.Target{{URL: srv.URL}}}, 1, time.Time{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := results.StepDir(t.TempDir())
	s, err := Generate(context.Background(), specs[0], dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 6 {
		t.Errorf("%d requests, want 6", s.Requests)
	}
}

// TestGenerateInterrupted: a generator stopped while it waits for the
// start writes no step.
func TestGenerateInterrupted(t *testing.T) {
	srv := server(t)
	specs, err := Specs(loadspec.Spec{Users: 1, Iterations: 1, Targets: []load.Target{{URL: srv.URL}}}, 1, time.Now().Add(time.Minute), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	dir := results.StepDir(t.TempDir())
	if _, err := Generate(ctx, specs[0], dir, nil); err == nil {
		t.Error("an interrupted generator reported no error")
	}
	if n, err := dir.CountRecords(); err == nil {
		t.Errorf("an interrupted generator left %d records", n)
	}
}
