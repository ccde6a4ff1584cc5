package metrics

import (
	"strconv"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Nanosecond histograms from 1 µs to one hour at 3 significant digits: fine
// enough for loopback latencies, wide enough for any timeout.
const (
	histMin    = 1_000
	histMax    = 3_600_000_000_000
	histDigits = 3
	// LateAfter is the schedule lag beyond which a send counts as late.
	LateAfter = 1_000_000
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// Aggregator folds records into counts and histograms. Memory is fixed
// however many records pass, so runs of any length stay flat. It is safe
// for one writer and concurrent readers.
type Aggregator struct {
	names *Names

	mu          sync.Mutex
	requests    int64
	successes   int64
	bytesIn     int64
	bytesOut    int64
	lastDone    int64
	lateStarts  int64
	errors      [numClasses]int64
	statusErr   map[int]int64
	statusCodes map[int]int64
	latency     *hdrhistogram.Histogram
	service     *hdrhistogram.Histogram
	lag         *hdrhistogram.Histogram
	timings     []*hdrhistogram.Histogram // by metric index
	malformed   int64
	dropped     int64
}

// NewAggregator aggregates records whose Server-Timing metrics index names.
func NewAggregator(names *Names) *Aggregator {
	return &Aggregator{
		names:       names,
		statusErr:   map[int]int64{},
		statusCodes: map[int]int64{},
		latency:     newHist(),
		service:     newHist(),
		lag:         newHist(),
	}
}

// Add folds a batch of records in.
func (a *Aggregator) Add(batch []Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range batch {
		r := &batch[i]
		a.requests++
		a.bytesIn += r.BytesIn
		a.bytesOut += r.BytesOut
		a.lastDone = max(a.lastDone, r.Done)
		if r.Status != 0 {
			a.statusCodes[int(r.Status)]++
		}
		a.errors[r.Err]++
		switch r.Err {
		case OK:
			a.successes++
		case Status:
			a.statusErr[int(r.Status)]++
		}
		record(a.latency, r.Latency())
		record(a.service, r.ServiceTime())
		record(a.lag, r.Lag())
		if r.Lag() > LateAfter {
			a.lateStarts++
		}
		for _, t := range r.Timings[:r.NTimings] {
			for int(t.Metric) >= len(a.timings) {
				a.timings = append(a.timings, newHist())
			}
			record(a.timings[t.Metric], int64(t.Ms*1e6))
		}
	}
}

// CountMalformed adds Server-Timing entries that could not be parsed or had
// no room in a record.
func (a *Aggregator) CountMalformed(malformed, dropped int64) {
	a.mu.Lock()
	a.malformed += malformed
	a.dropped += dropped
	a.mu.Unlock()
}

// record clamps into the histogram's range: a value outside it is still a
// request and must be counted.
func record(h *hdrhistogram.Histogram, ns int64) {
	_ = h.RecordValue(min(max(ns, histMin), histMax))
}

// Progress is a cheap view for live display.
type Progress struct {
	Requests int64
	Errors   int64
	P99Ms    float64
}

// Progress reads the totals so far.
func (a *Aggregator) Progress() Progress {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Progress{
		Requests: a.requests,
		Errors:   a.requests - a.successes,
		P99Ms:    float64(a.latency.ValueAtQuantile(99)) / 1e6,
	}
}

// Fill writes the request-derived fields of s: counts, rates over elapsed
// seconds, distributions and histograms.
func (a *Aggregator) Fill(s *Summary, elapsedS float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.Requests = a.requests
	s.Successes = a.successes
	if a.requests > 0 {
		s.SuccessRate = float64(a.successes) / float64(a.requests)
	}
	if elapsedS > 0 {
		s.ThroughputRPS = float64(a.requests) / elapsedS
	}
	s.BytesIn, s.BytesOut = a.bytesIn, a.bytesOut
	s.Errors = map[string]int64{}
	for c := Timeout; c < numClasses; c++ {
		if c != Status && a.errors[c] > 0 {
			s.Errors[c.String()] = a.errors[c]
		}
	}
	for code, n := range a.statusErr {
		s.Errors["status "+strconv.Itoa(code)] = n
	}
	s.StatusCodes = map[string]int64{}
	for code, n := range a.statusCodes {
		s.StatusCodes[strconv.Itoa(code)] = n
	}
	s.Latency = distribution(a.latency)
	s.Uncorrected = distribution(a.service)
	s.ScheduleLag = distribution(a.lag)
	s.LateStarts = a.lateStarts
	s.ServerTimingMalformed, s.ServerTimingDropped = a.malformed, a.dropped
	s.ServerTiming = map[string]Distribution{}
	s.Histograms = map[string]string{histLatency: encode(a.latency), histUncorrected: encode(a.service), histScheduleLag: encode(a.lag)}
	for i, h := range a.timings {
		name := a.names.Name(uint8(i))
		if h.TotalCount() == 0 || name == "" {
			continue
		}
		s.ServerTiming[name] = distribution(h)
		s.Histograms[histServerTiming+name] = encode(h)
	}
}
