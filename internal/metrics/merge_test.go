package metrics

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// load makes n records: latencies spread over three orders of magnitude,
// some failures, a Server-Timing metric on some.
func load(rng *rand.Rand, names *Names, n int) []Record {
	db, _ := names.Index([]byte("db"))
	out := make([]Record, n)
	for i := range out {
		lat := int64(50_000 * (1 + rng.ExpFloat64()*float64(1+i%100)))
		r := Record{Seq: uint64(i), Intended: int64(i) * 1e6, BytesIn: 100, BytesOut: 50, Status: 200}
		r.Sent = r.Intended + rng.Int64N(2_000_000)
		r.Done = r.Intended + lat
		if i%37 == 0 {
			r.Status, r.Err = 503, Status
		}
		if i%3 == 0 {
			r.NTimings = 1
			r.Timings[0] = Timing{Metric: db, Ms: float64(lat) / 3e6}
		}
		out[i] = r
	}
	return out
}

func summarise(names *Names, recs []Record, seconds float64) Summary {
	a := NewAggregator(names)
	a.Add(recs)
	s := Summary{Model: "closed", Valid: true, AchievedRateOK: true, SuccessRateOK: true, DurationS: seconds, Warnings: []string{}}
	a.Fill(&s, seconds)
	s.AchievedRPS = s.ThroughputRPS
	return s
}

// The merge of a load's parts is the summary of the whole load: every
// distribution exactly (the histograms hold the same counts in the same
// buckets), counts summed, rates over the parts' time.
func TestMergeIsTheSummaryOfTheWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := &Names{}
	recs := load(rng, names, 30_000)
	whole := summarise(names, recs, 30)
	var parts []Summary
	for _, cut := range [][2]int{{0, 7_000}, {7_000, 7_001}, {7_001, 30_000}} {
		part := recs[cut[0]:cut[1]]
		parts = append(parts, summarise(names, part, float64(len(part))/1000))
	}
	got, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"latency", got.Latency, whole.Latency},
		{"uncorrected", got.Uncorrected, whole.Uncorrected},
		{"schedule lag", got.ScheduleLag, whole.ScheduleLag},
		{"server timing", got.ServerTiming, whole.ServerTiming},
		{"errors", got.Errors, whole.Errors},
		{"status codes", got.StatusCodes, whole.StatusCodes},
		{"requests", got.Requests, whole.Requests},
		{"successes", got.Successes, whole.Successes},
		{"success rate", got.SuccessRate, whole.SuccessRate},
		{"bytes in", got.BytesIn, whole.BytesIn},
		{"late starts", got.LateStarts, whole.LateStarts},
		{"duration", got.DurationS, whole.DurationS},
		{"throughput", got.ThroughputRPS, whole.ThroughputRPS},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: merged %v, whole %v", c.name, c.got, c.want)
		}
	}
	if !got.Valid || len(got.Histograms) != len(whole.Histograms) {
		t.Errorf("merged valid %v, histograms %d of %d", got.Valid, len(got.Histograms), len(whole.Histograms))
	}
	// Merging the merged again with nothing changes nothing, its warnings
	// included: a load in one piece has no parts to name.
	got.Warnings = []string{"a warning"}
	again, err := Merge([]Summary{got})
	if err != nil || !reflect.DeepEqual(again.Latency, got.Latency) || !reflect.DeepEqual(again.Warnings, got.Warnings) {
		t.Errorf("merge of one part: %v %q %v", again.Latency, again.Warnings, err)
	}
}

// A part that fails makes the whole fail, saying which part; the window
// spans the parts.
func TestMergeCarriesEveryPartsVerdict(t *testing.T) {
	names := &Names{}
	recs := load(rand.New(rand.NewPCG(3, 4)), names, 2_000)
	a, b := summarise(names, recs[:1_000], 1), summarise(names, recs[1_000:], 1)
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	a.StartedAt, a.EndedAt = t0, t0.Add(time.Second)
	b.StartedAt, b.EndedAt = t0.Add(5*time.Second), t0.Add(6*time.Second)
	b.Valid, b.SuccessRateOK = false, false
	b.Warnings = []string{"too many failures"}
	got, err := Merge([]Summary{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Valid || got.SuccessRateOK || !got.AchievedRateOK {
		t.Errorf("valid %v, success rate ok %v, rate ok %v: want the second part's failure carried", got.Valid, got.SuccessRateOK, got.AchievedRateOK)
	}
	if len(got.Warnings) != 1 || got.Warnings[0] != "part 2 of 2: too many failures" {
		t.Errorf("warnings %q", got.Warnings)
	}
	if !got.StartedAt.Equal(t0) || !got.EndedAt.Equal(t0.Add(6*time.Second)) || got.DurationS != 2 {
		t.Errorf("window %v to %v over %v s, want the parts' span and their 2 s", got.StartedAt, got.EndedAt, got.DurationS)
	}
}

func TestMergeRefusesWhatItCannotMerge(t *testing.T) {
	names := &Names{}
	s := summarise(names, load(rand.New(rand.NewPCG(5, 6)), names, 100), 1)
	open := s
	open.Model = "open"
	bare := s
	bare.Histograms = nil
	for _, c := range []struct {
		name  string
		parts []Summary
		want  string
	}{
		{"nothing", nil, "no part"},
		{"two models", []Summary{s, open}, "part 2 is of the open model, part 1 of the closed"},
		{"no histograms", []Summary{s, bare}, "part 2 has no latency histogram"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Merge(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
