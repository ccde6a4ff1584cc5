package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/servertiming"
)

// worker is one user (closed model) or one connection's sender (open
// model). Everything on its request path is its own, so it takes no lock
// and, once warm, allocates nothing.
type worker struct {
	id      uint32
	e       *Engine
	reqs    []*fasthttp.Request
	resp    *fasthttp.Response
	metrics []servertiming.Metric
	batch   []metrics.Record
	born    int64 // when the current batch got its first record
	rng     *rand.Rand
	timer   *time.Timer
}

func (e *Engine) newWorker(id uint32) *worker {
	w := &worker{
		id:      id,
		e:       e,
		resp:    fasthttp.AcquireResponse(),
		metrics: make([]servertiming.Metric, 0, 2*metrics.MaxTimings),
		batch:   make([]metrics.Record, 0, batchSize),
		rng:     rand.New(rand.NewPCG(uint64(id), 0x6d736265)),
	}
	// A fasthttp request is mutated while it is written, so each worker
	// sends its own copy.
	for _, t := range e.targets {
		r := fasthttp.AcquireRequest()
		t.req.CopyTo(r)
		w.reqs = append(w.reqs, r)
	}
	return w
}

func (e *Engine) newWorkers(n int) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = e.newWorker(uint32(i))
	}
	return ws
}

func (w *worker) release() {
	for _, r := range w.reqs {
		fasthttp.ReleaseRequest(r)
	}
	fasthttp.ReleaseResponse(w.resp)
	if w.timer != nil {
		w.timer.Stop()
	}
}

// closedLoop sends, waits, thinks, until the user's budget, the shared
// budget, the deadline (ns since base; -1 for none) or ctx ends it.
func (w *worker) closedLoop(ctx context.Context, deadline int64) {
	e := w.e
	for it := 0; e.cfg.Iterations <= 0 || it < e.cfg.Iterations; it++ {
		if ctx.Err() != nil || (deadline >= 0 && int64(time.Since(e.base)) >= deadline) {
			return
		}
		seq, ok := e.claim()
		if !ok {
			return
		}
		w.hit(seq, e.now())
		if e.cfg.Think.Max > 0 && !w.think(ctx, deadline) {
			return
		}
	}
}

// think pauses, cut short by the deadline or ctx; false means stop.
func (w *worker) think(ctx context.Context, deadline int64) bool {
	d := w.e.cfg.Think.draw(w.rng)
	if deadline >= 0 {
		left := time.Duration(deadline) - time.Since(w.e.base)
		if left <= d {
			return false
		}
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// hit sends one request and records it.
func (w *worker) hit(seq uint64, intended int64) {
	e := w.e
	ti := e.mix.pick(seq)
	sent := e.now()
	timeout := e.cfg.Timeout
	if e.gate != nil {
		e.gate <- struct{}{}
		timeout -= time.Duration(e.now() - sent)
	}
	err := e.client.DoTimeout(w.reqs[ti], w.resp, timeout)
	if e.gate != nil {
		<-e.gate
	}
	w.store(w.id, seq, ti, intended, sent, e.now(), err)
}

// store records the request whose response (or err) the worker holds; id
// is the user or connection it went through.
func (w *worker) store(id uint32, seq uint64, ti uint16, intended, sent, done int64, err error) {
	e := w.e
	if len(w.batch) == 0 {
		w.born = done
	}
	w.batch = w.batch[:len(w.batch)+1]
	r := &w.batch[len(w.batch)-1]
	*r = metrics.Record{
		Seq:      seq,
		Intended: intended,
		Sent:     sent,
		Done:     done,
		BytesOut: e.targets[ti].bytesOut,
		Worker:   id,
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
	if len(w.batch) == cap(w.batch) || done-w.born >= batchAge {
		w.flush()
	}
}

// check applies the expectations and reads Server-Timing.
func (w *worker) check(r *metrics.Record, t *prepared) {
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
func (w *worker) flush() {
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
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout),
		errors.Is(err, fasthttp.ErrNoFreeConns), errors.Is(err, os.ErrDeadlineExceeded):
		return metrics.Timeout
	case errors.As(err, &errno) && errno == syscall.ECONNREFUSED:
		return metrics.Refused
	case errors.As(err, &errno) && (errno == syscall.ECONNRESET || errno == syscall.EPIPE):
		return metrics.Reset
	case errors.Is(err, fasthttp.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return metrics.Closed
	}
	return metrics.Network
}
