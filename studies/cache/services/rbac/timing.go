package main

import (
	"net/http"
	"strconv"
	"time"
)

// timing collects the stages of one request for the W3C Server-Timing
// header, so msbench can split a request's latency without scraping logs.
// One per request; not safe for concurrent use.
type timing struct {
	start  time.Time
	header []byte
}

// stage starts timing name; calling the returned func records its duration.
func (t *timing) stage(name string) func() {
	begin := time.Now()
	return func() { t.header = appendMetric(t.header, name, time.Since(begin)) }
}

// value is the header: every finished stage, then handler up to now.
func (t *timing) value() string {
	return string(appendMetric(t.header, "handler", time.Since(t.start)))
}

func appendMetric(b []byte, name string, d time.Duration) []byte {
	if len(b) > 0 {
		b = append(b, ", "...)
	}
	b = append(b, name...)
	b = append(b, ";dur="...)
	return strconv.AppendFloat(b, float64(d.Nanoseconds())/1e6, 'f', 3, 64)
}

// timedWriter sets Server-Timing as the header is sent, the last moment a
// header can be set, so handler covers all the work before the answer.
type timedWriter struct {
	http.ResponseWriter
	t    *timing
	sent bool
}

func (w *timedWriter) WriteHeader(status int) {
	if !w.sent {
		w.sent = true
		w.Header().Set("Server-Timing", w.t.value())
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *timedWriter) Write(b []byte) (int, error) {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *timedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
