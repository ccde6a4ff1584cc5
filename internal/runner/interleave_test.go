package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func TestSliceLoad(t *testing.T) {
	w := study.Interleaving{Slice: 5 * time.Second, Warmup: 500 * time.Millisecond, Rounds: 5}
	s := time.Second
	for _, c := range []struct {
		name     string
		spec     loadspec.Spec
		requests []int64         // per slice; nil for none
		duration []time.Duration // per slice; nil for none
	}{
		{"count, closed: the study's rounds", loadspec.Spec{Users: 2, Requests: 20}, []int64{4, 4, 4, 4, 4}, nil},
		{"count that does not divide", loadspec.Spec{Users: 2, Requests: 22}, []int64{5, 5, 4, 4, 4}, nil},
		{"fewer requests than rounds", loadspec.Spec{Users: 1, Requests: 3}, []int64{1, 1, 1}, nil},
		// Slices as large as the users at least, so that each sends at
		// the step's concurrency.
		{"fewer requests than users and rounds", loadspec.Spec{Users: 2, Requests: 9}, []int64{3, 2, 2, 2}, nil},
		{"as many requests as users, the default's", loadspec.Spec{Requests: 25}, []int64{13, 12}, nil},
		{"fewer requests than users", loadspec.Spec{Users: 150, Requests: 10}, []int64{10}, nil},
		{"as many requests as users thrice", loadspec.Spec{Users: 150, Requests: 500}, []int64{167, 167, 166}, nil},
		{"count at a rate is a time", loadspec.Spec{Open: true, Rate: 200, Requests: 6000}, []int64{1000, 1000, 1000, 1000, 1000, 1000}, nil},
		{"time", loadspec.Spec{Users: 4, Duration: 20 * s}, nil, []time.Duration{5 * s, 5 * s, 5 * s, 5 * s}},
		{"time near a slice", loadspec.Spec{Open: true, Rate: 20, Duration: 7 * s}, nil, []time.Duration{7 * s}},
		{"time under a slice", loadspec.Spec{Users: 1, Duration: s}, nil, []time.Duration{s}},
		{"no bound: the default time", loadspec.Spec{Users: 1}, nil, []time.Duration{5 * s, 5 * s}},
		{"time and count", loadspec.Spec{Users: 1, Duration: 10 * s, Requests: 101}, []int64{51, 50}, []time.Duration{5 * s, 5 * s}},
		// Slices of 5 s would hold one think of up to 4 s: fewer, longer.
		{"time with think", loadspec.Spec{Users: 1, Duration: 20 * s, Think: load.Think{Min: s, Max: 4 * s}}, nil, []time.Duration{10 * s, 10 * s}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sliceLoad(c.spec, w)
			var requests []int64
			var duration []time.Duration
			seeds := map[uint64]bool{}
			for _, sp := range got {
				if sp.Requests > 0 {
					requests = append(requests, sp.Requests)
				}
				if sp.Duration > 0 {
					duration = append(duration, sp.Duration)
				}
				seeds[sp.Seed] = true
				if sp.Users != c.spec.Users || sp.Rate != c.spec.Rate || sp.Open != c.spec.Open {
					t.Errorf("slice %+v changes the load's shape", sp)
				}
			}
			if !slices.Equal(requests, c.requests) || !slices.Equal(duration, c.duration) || len(seeds) != len(got) {
				t.Errorf("slices of %d requests, %v, %d seeds; want %d requests, %v", requests, duration, len(seeds), c.requests, c.duration)
			}
		})
	}
	warm := sliceWarmup(loadspec.Spec{Open: true, Rate: 200, Requests: 6000}, w, study.Warmup{}, 6)
	if warm.Duration != w.Warmup || warm.Requests != 0 || warm.Rate != 200 {
		t.Errorf("warm-up %+v", warm)
	}
	// A user thinking 500 ms can still send in a slice's warm-up, and the
	// warm-up and every slice pass the load's own checks.
	thinking := loadspec.Spec{Users: 10, Requests: 10000, Think: load.Think{Max: 500 * time.Millisecond}}
	if warm := sliceWarmup(thinking, w, study.Warmup{}, 5); warm.Duration != time.Second {
		t.Errorf("warm-up of users thinking 500ms: %v", warm.Duration)
	}
	for _, sp := range append(sliceLoad(thinking, w), sliceWarmup(thinking, w, study.Warmup{}, 5)) {
		if err := sp.Validate(); err != nil {
			t.Errorf("%+v: %v", sp, err)
		}
	}
	// A step warmed by a count shares it out: at most its part per slice.
	warm = sliceWarmup(loadspec.Spec{Users: 150, Requests: 1000}, w, study.Warmup{Requests: 50}, 5)
	if warm.Duration != w.Warmup || warm.Requests != 10 || warm.Users != 150 {
		t.Errorf("warm-up %+v, want 500ms or 10 requests", warm)
	}
}

// Every variant takes each place in a round equally often, and the same
// seed gives the same orders.
func TestSliceOrderIsUniformAndReplayable(t *testing.T) {
	const n, rounds = 3, 6000
	var at [n][n]int
	for round := 1; round <= rounds; round++ {
		perm := sliceOrder(7, 2, 1, round, n)
		if !slices.Equal(perm, sliceOrder(7, 2, 1, round, n)) {
			t.Fatal("the same seed gave another order")
		}
		for pos, v := range perm {
			at[v][pos]++
		}
	}
	// Each count is binomial(6000, 1/3): sd 36.5; 6 sd is never crossed by
	// a uniform shuffle in practice, and a biased one crosses it at once.
	for v := range n {
		for pos := range n {
			if d := at[v][pos] - rounds/n; d > 220 || d < -220 {
				t.Errorf("variant %d took place %d %d times of %d", v, pos, at[v][pos], rounds)
			}
		}
	}
	if slices.Equal(sliceOrder(7, 2, 1, 1, 5), sliceOrder(7, 3, 1, 1, 5)) && slices.Equal(sliceOrder(7, 2, 1, 1, 5), sliceOrder(7, 2, 2, 1, 5)) {
		t.Error("another repetition and another step drew the same order")
	}
}

// interleaved is the A/A study with its step interleaved.
func interleaved(t *testing.T) *study.Study {
	t.Helper()
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	st := s.Step("greet")
	st.Interleaved, st.Sequential = true, ""
	return s
}

var roundLine = regexp.MustCompile(`(?m)^  greet round (\d)/5: (.*)$`)

// The deployments that booted slowest in the repetition before boot
// first; unknown ones keep the repetition's order.
func TestBootQueueStartsTheSlowestFirst(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name string
		last []time.Duration
		want []int
	}{
		{"first repetition: the order", []time.Duration{0, 0, 0}, []int{0, 1, 2}},
		{"slowest first", []time.Duration{4 * s, 80 * s, s, 70 * s}, []int{1, 3, 0, 2}},
		{"ties keep the order", []time.Duration{5 * s, 9 * s, 5 * s}, []int{1, 0, 2}},
		{"unknown after known", []time.Duration{0, 3 * s}, []int{1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := bootQueue(c.last)
			if !slices.Equal(got, c.want) {
				t.Errorf("bootQueue(%v) = %v, want %v", c.last, got, c.want)
			}
		})
	}
}

// A repetition deploys every variant at once and measures the step in
// rounds, each variant one slice per round in a fresh order drawn from
// the run's seed; each variant's step is one unit: one summary of every
// slice, one records file numbering them, a log of the slices.
func TestInterleavedRepetitions(t *testing.T) {
	s := interleaved(t)
	seed := uint64(11)
	var log bytes.Buffer
	r := runThrice(t, s, seed, &log)
	prov, _ := r.ReadProvenance()
	rounds := roundLine.FindAllStringSubmatch(log.String(), -1)
	if len(rounds) != 15 {
		t.Fatalf("%d rounds logged, want 5 in each of 3 repetitions:\n%s", len(rounds), log.String())
	}
	for rep := 1; rep <= 3; rep++ {
		order := prov.Order[rep-1]
		// Deployed at once, in the repetition's order, before any slice.
		deployed := regexp.MustCompile(fmt.Sprintf(`rep %d · deploy (\d)/3 · flavour=(\w+)`, rep)).FindAllStringSubmatch(log.String(), -1)
		if len(deployed) != 3 {
			t.Fatalf("rep %d: deployed %v", rep, deployed)
		}
		for round := 1; round <= 5; round++ {
			var want []string
			for _, j := range sliceOrder(seed, rep, 0, round, 3) {
				want = append(want, order[j])
			}
			if got := rounds[(rep-1)*5+round-1][2]; got != strings.Join(want, ", ") {
				t.Errorf("rep %d round %d ran %s, want %v", rep, round, got, want)
			}
		}
		for _, key := range order {
			d := r.StepDir(rep, key, "greet")
			sum, err := d.ReadSummary()
			if err != nil || sum.Requests != 20 || sum.Successes != 20 {
				t.Fatalf("rep %d %s: %+v %v", rep, key, sum, err)
			}
			rows, err := d.ReadRecords()
			if err != nil || len(rows) != 20 {
				t.Fatalf("rep %d %s: %d records %v", rep, key, len(rows), err)
			}
			// Rows come in the order answers came; by sequence number, the
			// slices follow each other, each after the time of the last.
			slices.SortFunc(rows, func(a, b records.Row) int { return cmp.Compare(a.Seq, b.Seq) })
			last := map[int32][2]int64{} // slice: first and last intended time
			for i, row := range rows {
				if row.Seq != int64(i) || row.Slice != int32(i/4+1) {
					t.Fatalf("rep %d %s: record %d has seq %d, slice %d", rep, key, i, row.Seq, row.Slice)
				}
				span, ok := last[row.Slice]
				if !ok {
					span = [2]int64{row.Intended, row.Intended}
				}
				last[row.Slice] = [2]int64{min(span[0], row.Intended), max(span[1], row.Intended)}
			}
			for k := int32(2); k <= 5; k++ {
				if last[k][0] < last[k-1][1] {
					t.Errorf("rep %d %s: slice %d starts at %d, before slice %d's last request at %d", rep, key, k, last[k][0], k-1, last[k-1][1])
				}
			}
			sl, err := d.ReadSlices()
			if err != nil || sl == nil || sl.Rounds != 5 || len(sl.Slices) != 5 {
				t.Fatalf("rep %d %s: slices %+v %v", rep, key, sl, err)
			}
			var total int64
			for k, one := range sl.Slices {
				total += one.Requests
				if one.Number != k+1 || one.Of != 3 || one.Position < 1 || one.Position > 3 || !one.Valid {
					t.Errorf("rep %d %s: slice %+v", rep, key, one)
				}
			}
			if total != sum.Requests {
				t.Errorf("rep %d %s: slices sent %d, the summary counts %d", rep, key, total, sum.Requests)
			}
			if aud, err := d.ReadAudit(); err != nil || aud == nil || aud.TickSlackS < 5*0.01 {
				t.Errorf("rep %d %s: audit %+v %v, want the tick slack of 5 windows", rep, key, aud, err)
			}
		}
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

// A step's own warm-up is sent right before each variant's first slice,
// in place of that slice's warm-up, and the before hooks after it; the
// later slices have their own (one request each: the warm-up's 3 shared
// over 5 rounds, at least one).
func TestStepWarmupBeforeAVariantsFirstSlice(t *testing.T) {
	s := interleaved(t)
	s.Repetitions = 1
	st := s.Step("greet")
	st.Warmup = study.Warmup{Requests: 3}
	st.Before = []*study.Target{{Service: "web", Method: "POST", Path: "/stats/reset", ExpectStatus: "200"}}
	st.Collect = []*study.Target{{Name: "stats", Service: "web", Method: "GET", Path: "/stats", ExpectStatus: "200"}}
	r := runOnce(t, s, 3)
	prov, _ := r.ReadProvenance()
	for _, key := range prov.Order[0] {
		d := r.StepDir(1, key, "greet")
		warm, err := d.ReadWarmup()
		if err != nil || warm == nil || warm.Requests != 3 {
			t.Fatalf("%s: warm-up %+v %v, want the step's 3 requests", key, warm, err)
		}
		sl, err := d.ReadSlices()
		if err != nil || sl == nil || len(sl.Slices) != 5 {
			t.Fatalf("%s: slices %+v %v", key, sl, err)
		}
		if first := sl.Slices[0]; warm.StartedAt.Before(first.StartedAt) {
			t.Errorf("%s: warm-up started at %v, before its first slice's turn at %v (position %d of %d)", key, warm.StartedAt, first.StartedAt, first.Position, first.Of)
		}
		if n := served(t, d, key); n != 20+4 {
			t.Errorf("%s: served %d after the hooks, want the 20 measured and 4 later slices' warm-ups", key, n)
		}
	}
}

// A later slice of a closed step whose window holds several of its users'
// cycles warms up as a lead: the slice's own users send it and go on into
// the measured part without a pause, and the service answers it though
// nothing counts it. A variant's first slice keeps the step's warm-up, a
// load of its own: nothing says yet how long a cycle takes.
func TestLaterSlicesWarmUpAsALead(t *testing.T) {
	s := interleaved(t)
	s.Repetitions = 1
	s.Interleave.Slice = 200 * time.Millisecond
	st := s.Step("greet")
	st.Load.Requests, st.Load.Duration = 0, time.Second
	st.Warmup = study.Warmup{Duration: 300 * time.Millisecond}
	st.Collect = []*study.Target{{Name: "stats", Service: "web", Method: "GET", Path: "/stats", ExpectStatus: "200"}}
	r := runOnce(t, s, 5)
	prov, _ := r.ReadProvenance()
	for _, key := range prov.Order[0] {
		d := r.StepDir(1, key, "greet")
		if warm, err := d.ReadWarmup(); err != nil || warm == nil || warm.Requests < 2 {
			t.Fatalf("%s: warm-up %+v %v, want the step's", key, warm, err)
		}
		sum, err := d.ReadSummary()
		if err != nil || sum.Requests == 0 {
			t.Fatalf("%s: summary %+v %v", key, sum, err)
		}
		sl, err := d.ReadSlices()
		if err != nil || sl == nil || len(sl.Slices) != 5 {
			t.Fatalf("%s: slices %+v %v", key, sl, err)
		}
		for _, one := range sl.Slices {
			if one.Lead != (one.Number > 1) {
				t.Errorf("%s: slice %d warmed up as a lead: %v", key, one.Number, one.Lead)
			}
		}
		// The step's warm-up, and each later lead's two users' first
		// requests, beside the measured ones.
		if n, least := served(t, d, key), sum.Requests+2+4*2; n < least {
			t.Errorf("%s: served %d, want at least %d", key, n, least)
		}
	}
}

func TestLeadFits(t *testing.T) {
	at := func(p50Ms, rps float64) metrics.Summary {
		return metrics.Summary{Latency: metrics.Distribution{P50: p50Ms}, ThroughputRPS: rps}
	}
	think := load.Think{Min: 400 * time.Millisecond, Max: 600 * time.Millisecond}
	tests := []struct {
		name  string
		last  metrics.Summary
		slice loadspec.Spec
		want  bool
	}{
		{"fast answers, a 5 s window", at(2, 1000), loadspec.Spec{Duration: 5 * time.Second}, true},
		{"a 5 s page in a 5 s window (ipc at 200 users)", at(5000, 35), loadspec.Spec{Duration: 5 * time.Second}, false},
		{"exactly four cycles", at(1000, 10), loadspec.Spec{Duration: 4 * time.Second}, true},
		{"think time counts in the cycle", at(800, 100), loadspec.Spec{Duration: 5 * time.Second, Think: think}, false},
		{"a count at the last slice's rate", at(10, 100), loadspec.Spec{Requests: 1000}, true},
		{"a count that ends the window first", at(1000, 30), loadspec.Spec{Duration: 10 * time.Second, Requests: 60}, false},
		{"nothing answered last time", at(0, 0), loadspec.Spec{Requests: 100}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leadFits(tt.last, tt.slice); got != tt.want {
				t.Fatalf("leadFits = %v, want %v", got, tt.want)
			}
		})
	}
}

// served is what the test service of key said it had served when the
// step's collect hook asked.
func served(t *testing.T, d results.StepDir, key string) int64 {
	t.Helper()
	got, err := d.ReadCollected()
	if err != nil || len(got["stats"]) != 1 {
		t.Fatalf("%s: collected %v %v", key, got, err)
	}
	var stats struct{ Served int64 }
	if err := json.Unmarshal(got["stats"][0].Body, &stats); err != nil {
		t.Fatal(err)
	}
	return stats.Served
}

// When every variant of an interleaved step has failed, no further round
// is begun (nor logged).
func TestNoRoundOnceEveryVariantFailed(t *testing.T) {
	s := interleaved(t)
	s.Repetitions = 1
	// A hook whose answer cannot match: each variant fails in its first slice.
	s.Step("greet").Before = []*study.Target{{Service: "web", Method: "GET", Path: "/hello", ExpectStatus: "204"}}
	seed := uint64(3)
	var log bytes.Buffer
	if _, err := runAA(t, s, &seed, "", context.Background(), &log); err == nil {
		t.Fatalf("run succeeded with every variant failed:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "FAILED "); n != 3 {
		t.Errorf("%d variants failed, want 3:\n%s", n, log.String())
	}
	if rounds := roundLine.FindAllString(log.String(), -1); len(rounds) != 1 {
		t.Errorf("%d rounds begun, want the first only:\n%s", len(rounds), log.String())
	}
}

// cancelOn cancels the run once a line with marker was logged.
type cancelOn struct {
	w      *bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.marker)) {
		defer c.cancel()
	}
	return c.w.Write(p)
}

// Interrupted in the middle of an interleaved step, a run keeps what
// finished and leaves the step to do again: a slice alone is no unit.
func TestInterruptedInterleavedStepIsRedone(t *testing.T) {
	s := interleaved(t)
	s.Repetitions = 2
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	dir, err := runAA(t, s, nil, "", ctx, &cancelOn{w: &log, marker: "greet round 3/5", cancel: cancel})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v\n%s", err, log.String())
	}
	r, _ := results.Open(dir)
	if done := r.State().Done; len(done) != 0 {
		t.Fatalf("done after an interrupt in the first step: %v", done)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running after interrupt: %v", left)
	}
	var resumed bytes.Buffer
	if _, err := runAA(t, s, nil, dir, context.Background(), &resumed); err != nil {
		t.Fatalf("resume: %v\n%s", err, resumed.String())
	}
	r, _ = results.Open(dir)
	if done := r.State().Done; len(done) != 6 {
		t.Fatalf("done after resume: %v", done)
	}
	for _, key := range []string{"plain", "salted", "salted@aa"} {
		if rows, err := r.StepDir(1, key, "greet").ReadRecords(); err != nil || len(rows) != 20 {
			t.Errorf("rep 1 %s: %d records %v", key, len(rows), err)
		}
	}
}

// A run asked to go on until it has measured enough adds repetitions,
// each in its own drawn order, until told so or until its most; it keeps
// the count in study.resolved.json and why it stopped in provenance.json.
func TestRepetitionsUntilEnough(t *testing.T) {
	for _, c := range []struct {
		name     string
		enoughAt int // the repetitions after which Enough says done
		max      int
		want     int
		why      string
	}{
		{"enough after 3", 3, 10, 3, "narrow enough"},
		{"never enough", 1000, 2, 2, "stopped at the most repetitions asked, 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := interleaved(t)
			s.Repetitions = 1
			seed := uint64(5)
			opts := testOptions(t, &bytes.Buffer{})
			opts.Seed, opts.MaxRepetitions = &seed, c.max
			var asked []int
			opts.Enough = func(dir string, reps int) (bool, string, error) {
				asked = append(asked, reps)
				if reps >= c.enoughAt {
					return true, "narrow enough", nil
				}
				return false, "still too wide", nil
			}
			dir, err := Run(context.Background(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := results.Open(dir)
			if done := r.State().Done; len(done) != 3*c.want {
				t.Errorf("done %v, want %d repetitions of 3 runs", done, c.want)
			}
			prov, _ := r.ReadProvenance()
			saved, err := r.ReadStudy()
			if err != nil || saved.Repetitions != c.want || !strings.Contains(prov.Stopped, c.why) || len(prov.Order) != c.want {
				t.Errorf("saved %d repetitions (%v), stopped %q, %d orders; want %d, %q", saved.Repetitions, err, prov.Stopped, len(prov.Order), c.want, c.why)
			}
			for rep := 1; rep <= c.want; rep++ {
				if want := keys(Order(seed, rep, s.Runs())); !slices.Equal(prov.Order[rep-1], want) {
					t.Errorf("rep %d ran %v, want the drawn %v", rep, prov.Order[rep-1], want)
				}
			}
			if !slices.Equal(asked, seq(1, c.want)) {
				t.Errorf("asked after %v repetitions, want after each of 1..%d", asked, c.want)
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// A frozen deployment takes connections but answers nothing until
// thawed; every process of it, dependencies too, stops and goes on.
func TestFreezeStopsAWholeDeployment(t *testing.T) {
	s, err := study.Load("testdata/tiny.yaml", "healthy")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lab, err := OpenLab(ctx, s, LabOptions{Root: repoRoot(t), CacheDir: t.TempDir(), DataDir: t.TempDir(), Name: "freeze-test", Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	d, err := lab.Deploy(ctx, s, s.Matrix()[0], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	get := func(timeout time.Duration) error {
		c := &http.Client{Timeout: timeout}
		resp, err := c.Get("http://" + d.Addr("front") + "/hello")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := d.freeze(); err != nil {
		t.Fatal(err)
	}
	if err := get(300 * time.Millisecond); err == nil {
		t.Fatal("a frozen deployment answered")
	}
	for _, in := range d.instances {
		if st, err := procfs.ReadStat(in.proc.Pid()); err != nil || st.State != 'T' {
			t.Errorf("%s: state %q (%v), want stopped", in.name, st.State, err)
		}
	}
	if err := d.thaw(); err != nil {
		t.Fatal(err)
	}
	if err := get(10 * time.Second); err != nil {
		t.Fatalf("thawed: %v", err)
	}
}

// With idle: freeze the waiting deployments are stopped between their
// turns, and each variant's slices are measured as with them running.
func TestInterleavedWithTheOthersFrozen(t *testing.T) {
	s := interleaved(t)
	s.Repetitions, s.Interleave.Freeze = 1, true
	var log bytes.Buffer
	dir, err := runAA(t, s, nil, "", context.Background(), &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	r, _ := results.Open(dir)
	if done := r.State().Done; len(done) != 3 || !strings.Contains(log.String(), "the others frozen meanwhile") {
		t.Fatalf("done %v\n%s", done, log.String())
	}
	for _, key := range []string{"plain", "salted", "salted@aa"} {
		if sum, err := r.StepDir(1, key, "greet").ReadSummary(); err != nil || sum.Successes != 20 {
			t.Errorf("%s: %+v %v", key, sum, err)
		}
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

// A step whose slices the load's checks would refuse is the study's
// error, said before anything starts.
func TestSlicesAreCheckedBeforeTheRun(t *testing.T) {
	s := interleaved(t)
	st := s.Step("greet")
	st.Load.Timeout = 2 * time.Hour // beyond what any load may wait
	if err := checkSlices(s); err == nil || !strings.Contains(err.Error(), "step greet cut into 5 slices") {
		t.Fatalf("error %v", err)
	}
	st.Interleaved = false
	if err := checkSlices(s); err != nil {
		t.Errorf("a step in one piece: %v", err)
	}
}

// snapshotsAt takes a snapshot of the test's child processes each time
// a line with marker is logged.
type snapshotsAt struct {
	mu     sync.Mutex
	w      bytes.Buffer
	marker string
	taken  []map[int]placedProcess
}

func (s *snapshotsAt) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte(s.marker)) {
		_, children := snapshot()
		s.taken = append(s.taken, children)
	}
	return s.w.Write(p)
}

// With the generator on core 0 and the services and a dependency on core
// 1, a repetition's deployments boot two at a time, the services of one of
// them on core 0 (which idles while nothing is measured), its dependency
// at home; all are on core 1 when measured, and provenance says so.
func TestDeploymentsBootTwoByTwo(t *testing.T) {
	if avail := placement.Available(); !avail.Contains(0) || !avail.Contains(1) {
		t.Skip("needs cores 0 and 1")
	}
	probe, err := resources.New("msbench-test-lend")
	if err != nil {
		t.Skip(err)
	}
	cpuset := probe.Cpuset()
	if err := probe.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !cpuset {
		t.Skip("no cgroup cpuset to move a booted deployment with")
	}
	s := interleaved(t)
	s.Placement = &study.Placement{Generator: "0", Services: map[string]string{"web": "1"}, Dependencies: map[string]string{"cache": "1"}}
	s.Deps = append(s.Deps, &study.Dependency{Name: "cache", Kind: "redis"})
	seed := uint64(5)
	log := &snapshotsAt{marker: "greet round 1/5"}
	dir, err := runAA(t, s, &seed, "", context.Background(), log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.w.String())
	}
	text := log.w.String()
	lent := regexp.MustCompile(`(?m)^rep \d · deploy \d/3 · .* · booting on core\(s\) 0, where no service runs, then moved home`).FindAllString(text, -1)
	if len(lent) < 3 {
		t.Errorf("%d deployments booted on core 0, want at least one a repetition:\n%s", len(lent), text)
	}
	if len(log.taken) != 3 {
		t.Fatalf("%d snapshots, want one a repetition:\n%s", len(log.taken), text)
	}
	for i, children := range log.taken {
		n, caches := 0, 0
		for pid, p := range children {
			if p.comm == "redis-server" {
				caches++
				if !slices.Equal(slices.Compact(p.threads), []string{"1"}) {
					t.Errorf("rep %d: redis pid %d measured on cores %v, want 1", i+1, pid, p.threads)
				}
			}
			if p.comm != "svc" {
				continue
			}
			n++
			for _, c := range p.threads {
				if c != "1" {
					t.Errorf("rep %d: svc pid %d measured with a thread on cores %s: %v", i+1, pid, c, p.threads)
					break
				}
			}
		}
		if n != 3 || caches != 3 {
			t.Errorf("rep %d: %d svc and %d redis processes up when measured, want 3 of each", i+1, n, caches)
		}
	}
	// The services say where they started: as many on core 0 as the log
	// says booted there.
	logs, err := filepath.Glob(filepath.Join(dir, "logs", "rep-*", "*", "web.log"))
	if err != nil || len(logs) != 9 {
		t.Fatalf("%d service logs (%v), want 9", len(logs), err)
	}
	on0 := 0
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.Contains(b, []byte("started on cores 0,")):
			on0++
		case !bytes.Contains(b, []byte("started on cores 1,")):
			t.Errorf("%s: %s", f, b)
		}
	}
	if on0 != len(lent) {
		t.Errorf("%d services started on core 0, the log says %d", on0, len(lent))
	}
	r, prov := placedRun(t, dir)
	if prov.Placement.BootLent != "0" {
		t.Errorf("provenance says cores %q were lent for boots, want 0", prov.Placement.BootLent)
	}
	for _, pp := range prov.Placement.Processes {
		if (pp.Name == "web" || pp.Name == "cache") && (pp.CPUs != "1" || pp.Applied != "1") {
			t.Errorf("%s recorded on %+v, want cores 1 applied 1", pp.Name, pp)
		}
	}
	for rep := 1; rep <= 3; rep++ {
		for _, key := range prov.Order[rep-1] {
			st, err := r.VariantDir(rep, key).ReadStartup()
			if err != nil || st == nil || len(st.FirstRequests) == 0 || st.WaitedS < 0 || st.FirstSuccessS <= 0 {
				t.Errorf("rep %d %s: startup %+v %v", rep, key, st, err)
			}
		}
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

// A step measured in one piece inside a repetition that deploys every
// variant at once counts the waiting deployment's CPU as the run's, as a
// slice does: it is the run's own, not another process's on the machine.
func TestWaitingDeploymentsOfAOnePieceStepAreTheRuns(t *testing.T) {
	s, err := study.Load("testdata/waiting.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Step("greet").Interleaved || s.Step("hold").Interleaved {
		t.Fatalf("greet interleaved %v, hold %v", s.Step("greet").Interleaved, s.Step("hold").Interleaved)
	}
	r := runOnce(t, s, 3)
	for _, key := range []string{"plain", "salted"} {
		d := r.StepDir(1, key, "hold")
		res, err := d.ReadResources()
		if err != nil {
			t.Fatal(err)
		}
		aud, err := d.ReadAudit()
		if err != nil || aud == nil {
			t.Fatalf("%s: audit %v %v", key, aud, err)
		}
		// The other one spins a fifth of a core: about 0.2 s of the 1 s
		// step; any of it shows that it was counted.
		if res.IdleCPUS <= 0 || aud.RunCPUS < res.IdleCPUS {
			t.Errorf("%s: the waiting deployment used %.3f s, the run %.3f s: want it counted in the run's", key, res.IdleCPUS, aud.RunCPUS)
		}
	}
}
