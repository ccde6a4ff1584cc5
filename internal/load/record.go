package load

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/servertiming"
)

// recorder holds the loop's record batch and the buffers a response is
// read into. Everything on the request path is the loop's own, so it takes
// no lock and, once warm, allocates nothing.
type recorder struct {
	e       *Engine
	resp    *fasthttp.Response
	metrics []servertiming.Metric
	batch   []metrics.Record
	born    int64 // when the current batch got its first record
}

func (e *Engine) newRecorder() *recorder {
	return &recorder{
		e:       e,
		resp:    fasthttp.AcquireResponse(),
		metrics: make([]servertiming.Metric, 0, 2*metrics.MaxTimings),
		batch:   make([]metrics.Record, 0, batchSize),
	}
}

func (w *recorder) release() { fasthttp.ReleaseResponse(w.resp) }

// store records t's request, whose response (or err) the recorder holds,
// unless it was the lead's, and returns when it ended: done, or the
// timeout after sent.
func (w *recorder) store(t ticket, ti uint16, sent, done int64, err error) int64 {
	e := w.e
	if t.lead {
		// Only when it ended matters: it brings its user's next arrival.
		if err != nil && classify(err) == metrics.Timeout {
			return sent + int64(e.cfg.Timeout)
		}
		return done
	}
	if len(w.batch) == 0 {
		w.born = done
	}
	w.batch = w.batch[:len(w.batch)+1]
	r := &w.batch[len(w.batch)-1]
	*r = metrics.Record{
		Seq:      t.seq,
		Intended: t.intended,
		Sent:     sent,
		Done:     done,
		BytesOut: e.targets[ti].bytesOut,
		Worker:   t.user,
		Target:   ti,
	}
	if err != nil {
		r.Err = classify(err)
		if r.Err == metrics.Timeout {
			r.Done = sent + int64(e.cfg.Timeout)
		}
	} else {
		w.check(r, &e.targets[ti])
	}
	done = r.Done
	if len(w.batch) == cap(w.batch) || done-w.born >= batchAge {
		w.flush()
	}
	return done
}

// check applies the expectations and reads Server-Timing.
func (w *recorder) check(r *metrics.Record, t *prepared) {
	e := w.e
	status := w.resp.StatusCode()
	body := w.resp.Body()
	r.Status = uint16(status)
	r.BytesIn = int64(w.resp.Header.ContentLength())
	if r.BytesIn < 0 {
		r.BytesIn = int64(len(body))
	}
	r.BytesIn += headerBytes(&w.resp.Header)
	switch {
	case !t.expectStatus.Has(status):
		r.Err = metrics.Status
	case len(t.expectBody) > 0 && !bytes.Contains(body, t.expectBody):
		r.Err = metrics.Body
	}
	if e.cfg.TagHeader != "" {
		if v := w.resp.Header.Peek(e.cfg.TagHeader); len(v) > 0 {
			if n, err := fasthttp.ParseUint(v); err == nil {
				r.Tag = uint64(n)
			}
		}
	}
	w.metrics = w.metrics[:0]
	bad := 0
	for _, v := range w.resp.Header.PeekAll(fasthttp.HeaderServerTiming) {
		var n int
		w.metrics, n = servertiming.Parse(w.metrics, v)
		bad += n
	}
	if bad > 0 {
		e.badTimes.Add(int64(bad))
	}
	for _, m := range w.metrics {
		idx, ok := e.names.Index(m.Name)
		if !ok || r.NTimings == metrics.MaxTimings {
			e.dropped.Add(1)
			continue
		}
		r.Timings[r.NTimings] = metrics.Timing{Metric: idx, Ms: m.Dur}
		r.NTimings++
	}
}

// headerBytes counts the response head as it travels: status line, each
// "Name: value\r\n", and the blank line. Summing is far cheaper than
// re-serialising the header, and exact for the headers as received.
func headerBytes(h *fasthttp.ResponseHeader) int64 {
	n := int64(len("HTTP/1.1 200 \r\n") + len(h.StatusMessage()) + 2)
	h.VisitAll(func(k, v []byte) { n += int64(len(k) + len(v) + 4) })
	return n
}

// flush hands the batch to the collector and takes an empty one.
func (w *recorder) flush() {
	if len(w.batch) == 0 {
		return
	}
	w.e.batches <- w.batch
	select {
	case w.batch = <-w.e.free:
	default:
		w.batch = make([]metrics.Record, 0, batchSize)
	}
}

// classify names a transport error; the order matters because a timeout can
// also wrap a network error.
func classify(err error) metrics.ErrorClass {
	var errno syscall.Errno
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return metrics.Timeout
	case errors.As(err, &errno) && errno == syscall.ECONNREFUSED:
		return metrics.Refused
	case errors.As(err, &errno) && (errno == syscall.ECONNRESET || errno == syscall.EPIPE):
		return metrics.Reset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return metrics.Closed
	}
	return metrics.Network
}
