package fanout

import (
	"cmp"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
)

// synthetic writes n generators' outputs of one open load, as Generate
// would, with latencies of a different distribution per generator (so
// that no generator's percentiles are the whole's), errors, statuses and
// a Server-Timing metric; it returns their directories and every record.
func synthetic(t *testing.T, n, perGen int, okShare float64) ([]results.StepDir, []metrics.Record) {
	t.Helper()
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	ld := Load{Spec: loadspec.Spec{Open: true, Rate: 1000, Duration: time.Duration(n*perGen) * time.Millisecond}, Targets: []Target{{URL: "http://127.0.0.1:9/"}}}
	rng := rand.New(rand.NewPCG(1, 2))
	var dirs []results.StepDir
	var all []metrics.Record
	for g := range n {
		dir := results.StepDir(filepath.Join(t.TempDir(), "gen"))
		var names metrics.Names
		app, _ := names.Index([]byte("app"))
		targets := []string{"GET /a", "GET /b"}
		var batch []metrics.Record
		median := float64(2+3*g) * 1e6
		for i := range perGen {
			j := int64(g + i*n) // its index in the one schedule
			intended := start.UnixNano() + j*int64(time.Millisecond)
			lat := int64(median * math.Exp(0.6*rng.NormFloat64()))
			if g == n-1 && i%50 == 0 {
				lat *= 40 // a tail only this generator has
			}
			r := metrics.Record{Seq: uint64(i), Intended: intended, Sent: intended + rng.Int64N(200_000), Done: intended + lat,
				BytesIn: 120, BytesOut: 80, Worker: uint32(i % 4), Target: uint16(i % 2), Status: 200}
			r.Done = max(r.Done, r.Sent)
			switch {
			case rng.Float64() > okShare:
				r.Status, r.Err = 503, metrics.Status
			case i%211 == 0:
				r.Status, r.Err = 0, metrics.Timeout
			}
			r.Timings[0], r.NTimings = metrics.Timing{Metric: app, Ms: float64(lat) / 2e6}, 1
			batch = append(batch, r)
		}
		w, err := dir.CreateRecords(&names, targets)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(batch); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		agg := metrics.NewAggregator(&names)
		agg.Add(batch)
		end := start.Add(time.Duration(n*perGen)*time.Millisecond + time.Duration(g)*time.Millisecond)
		s := metrics.Summary{Model: "open", StartedAt: start, EndedAt: end, DurationS: end.Sub(start).Seconds(), Connections: 4,
			TargetRPS: 1000 / float64(n), Valid: true, AchievedRateOK: true, GeneratorCPUS: 0.1 * float64(g+1), GeneratorCPUs: "0", Warnings: []string{}}
		agg.Fill(&s, s.DurationS)
		s.AchievedRPS = float64(s.Requests) / s.DurationS
		s.Scheduled = s.Requests
		s.GeneratorCPUUtil = s.GeneratorCPUS / s.DurationS
		s.SuccessRateOK = s.SuccessRate >= loadspec.DefaultMinSuccess
		if err := dir.WriteSummary(s); err != nil {
			t.Fatal(err)
		}
		if err := writeSpec(dir, Spec{Load: ld, Share: Share{g, n}, Start: start}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
		all = append(all, batch...)
	}
	return dirs, all
}

// TestMergeIsExact is the test issue 24 names: the merged summary's
// percentiles are those of every record concatenated, within HDR's
// precision, and its HDR histograms are the very histograms of the
// concatenated records.
func TestMergeIsExact(t *testing.T) {
	const n, perGen = 3, 4000
	dirs, all := synthetic(t, n, perGen, 0.99)
	out := results.StepDir(t.TempDir())
	m, err := Merge(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	s, gens := m.Summary, m.Generators

	// Exact order statistics of every request's latency, in ms.
	lats := make([]float64, len(all))
	for i := range all {
		lats[i] = float64(all[i].Latency()) / 1e6
	}
	slices.Sort(lats)
	rank := func(q float64) float64 { return lats[int(math.Ceil(q*float64(len(lats))))-1] }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", s.Latency.P50, rank(0.50)},
		{"p99", s.Latency.P99, rank(0.99)},
		{"p999", s.Latency.P999, rank(0.999)},
		{"max", s.Latency.Max, lats[len(lats)-1]},
	} {
		// HDR at 3 significant digits reports a value's bucket's top.
		if c.got < c.want*0.999 || c.got > c.want*1.001 {
			t.Errorf("merged %s %.4f ms, of all records concatenated %.4f ms: beyond HDR's precision", c.name, c.got, c.want)
		}
	}
	if s.Latency.Count != int64(len(all)) || s.Requests != int64(len(all)) {
		t.Errorf("merged count %d, requests %d; want %d", s.Latency.Count, s.Requests, len(all))
	}

	// The same records aggregated in one piece: identical histograms.
	var names metrics.Names
	names.Index([]byte("app"))
	agg := metrics.NewAggregator(&names)
	agg.Add(all)
	var one metrics.Summary
	agg.Fill(&one, 1)
	if s.Latency != one.Latency || s.Uncorrected != one.Uncorrected || s.ScheduleLag != one.ScheduleLag || s.ServerTiming["app"] != one.ServerTiming["app"] {
		t.Errorf("merged distributions differ from the concatenated records':\nlatency %+v\n   want %+v\nservice %+v\n   want %+v", s.Latency, one.Latency, s.Uncorrected, one.Uncorrected)
	}
	for _, k := range []string{"latency", "uncorrected", "schedule_lag", "server_timing.app"} {
		if s.Histograms[k] != one.Histograms[k] {
			t.Errorf("merged HDR histogram %s differs from the concatenated records'", k)
		}
	}
	if s.Successes != one.Successes || !maps(s.Errors, one.Errors) || !maps(s.StatusCodes, one.StatusCodes) || s.LateStarts != one.LateStarts || s.BytesIn != one.BytesIn {
		t.Errorf("merged counts %d ok, errors %v, statuses %v, late %d; concatenated %d, %v, %v, %d", s.Successes, s.Errors, s.StatusCodes, s.LateStarts, one.Successes, one.Errors, one.StatusCodes, one.LateStarts)
	}

	// Rates over the union's span, not the sum of the generators' times.
	span := float64(n*perGen+n-1) / 1000
	if math.Abs(s.DurationS-span) > 1e-9 || math.Abs(s.ThroughputRPS-float64(len(all))/span) > 1e-6 {
		t.Errorf("duration %v s, throughput %v req/s; want the span %v s and %v req/s", s.DurationS, s.ThroughputRPS, span, float64(len(all))/span)
	}
	if math.Abs(s.TargetRPS-1000) > 1e-9 || s.Connections != 4*n {
		t.Errorf("target %v req/s over %d connections, want 1000 over %d", s.TargetRPS, s.Connections, 4*n)
	}
	if want := 0.1 + 0.2 + 0.3; math.Abs(s.GeneratorCPUS-want) > 1e-9 || s.GeneratorCPUUtil != gens[n-1].GeneratorCPUUtil {
		t.Errorf("generator CPU %v s at %v, want %v s summed and the busiest generator's %v", s.GeneratorCPUS, s.GeneratorCPUUtil, want, gens[n-1].GeneratorCPUUtil)
	}
	if !s.Valid {
		t.Errorf("merged step invalid: %v", s.Warnings)
	}

	// Records: one per request, numbered in order of intended start,
	// each with its own latency, workers disjoint between generators.
	rows, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Check(s); err != nil {
		t.Error(err)
	}
	byIntended := map[int64]metrics.Record{}
	for _, r := range all {
		byIntended[r.Intended] = r
	}
	workers := map[int32]int{}
	for i, r := range rows {
		orig := byIntended[r.Intended]
		if r.Seq != int64(i) || (i > 0 && r.Intended < rows[i-1].Intended) {
			t.Fatalf("row %d: seq %d, intended %d after %d: not numbered in order of intended start", i, r.Seq, r.Intended, rows[max(i-1, 0)].Intended)
		}
		if r.LatencyMs != float64(orig.Latency())/1e6 || r.Status != int32(orig.Status) || len(r.ServerTiming) != 1 {
			t.Fatalf("row %d: latency %v ms, status %d, timings %v; the request had %v ms, %d", i, r.LatencyMs, r.Status, r.ServerTiming, float64(orig.Latency())/1e6, orig.Status)
		}
		// The one schedule's index j is generator j mod n's.
		g := int(r.Seq % n)
		if w := int64(r.Worker); w < gens[g].Workers[0] || w >= gens[g].Workers[1] {
			t.Fatalf("row %d of generator %d: worker %d outside its range %v", i, g, w, gens[g].Workers)
		}
		workers[r.Worker]++
	}
	if len(workers) != 4*n {
		t.Errorf("%d distinct workers, want %d", len(workers), 4*n)
	}
	if _, err := os.Stat(filepath.Join(string(out), GeneratorsFile)); err != nil {
		t.Error(err)
	}
}

func maps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMergeJudgesTheWhole: the minimum success rate is judged on every
// request, not per generator.
func TestMergeJudgesTheWhole(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ok    float64
		valid bool
	}{
		{"most succeed", 0.9, true},
		{"under the minimum", 0.001, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dirs, _ := synthetic(t, 2, 1000, tt.ok)
			m, err := Merge(results.StepDir(t.TempDir()), dirs)
			if err != nil {
				t.Fatal(err)
			}
			s := m.Summary
			if s.Valid != tt.valid || s.SuccessRateOK != tt.valid {
				t.Errorf("success rate %.3f: valid %v, success rate ok %v; want %v", s.SuccessRate, s.Valid, s.SuccessRateOK, tt.valid)
			}
		})
	}
}

func TestMergeRefusesOtherLoads(t *testing.T) {
	dirs, _ := synthetic(t, 3, 10, 1)
	if _, err := Merge(results.StepDir(t.TempDir()), dirs[:2]); err == nil || !strings.Contains(err.Error(), "missing or repeated") {
		t.Errorf("two of three shares merged: %v", err)
	}
	if _, err := Merge(results.StepDir(t.TempDir()), []results.StepDir{dirs[0], dirs[1], dirs[1]}); err == nil || !strings.Contains(err.Error(), "missing or repeated") {
		t.Errorf("a share merged twice: %v", err)
	}
	spec := Spec{}
	if err := results.ReadJSON(filepath.Join(string(dirs[2]), specFile), &spec); err != nil {
		t.Fatal(err)
	}
	spec.Start = spec.Start.Add(time.Second)
	if err := writeSpec(dirs[2], spec); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(results.StepDir(t.TempDir()), dirs); err == nil || !strings.Contains(err.Error(), "not one load") {
		t.Errorf("shares started at different instants merged: %v", err)
	}
}

// TestWriteRecordsAsASlice: merged generators written as one slice of an
// interleaved step take their place after the slices before them.
func TestWriteRecordsAsASlice(t *testing.T) {
	dirs, all := synthetic(t, 2, 50, 1)
	m, err := Read(dirs)
	if err != nil {
		t.Fatal(err)
	}
	dir := results.StepDir(t.TempDir())
	w, err := dir.CreateRecords(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteRecords(w, records.Segment{Slice: 2, Seq: 1000, Time: 5e9}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := dir.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(all) {
		t.Fatalf("%d rows, want %d", len(rows), len(all))
	}
	first := slices.MinFunc(all, func(a, b metrics.Record) int { return cmp.Compare(a.Intended, b.Intended) })
	if r := rows[0]; r.Slice != 2 || r.Seq != 1000 || r.Intended != first.Intended+5e9 || r.Target == "" || r.ServerTiming[0].Name != "app" {
		t.Errorf("first row %+v: want slice 2, number 1000, intended %d, its target and timing named", r, first.Intended+5e9)
	}
}
