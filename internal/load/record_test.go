package load

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/pacer"
)

// Recording must not allocate: at tens of thousands of requests a second,
// garbage would cost the generator the CPU it measures with.
func TestRecordingDoesNotAllocate(t *testing.T) {
	e, err := New(Config{Targets: []Target{{URL: "http://127.0.0.1:1/"}}, Users: 1, Connections: 1, Timeout: time.Second, MaxRequests: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.batches = make(chan []metrics.Record, 1<<16)
	e.free = make(chan []metrics.Record, 1<<16)
	w := e.newRecorder()
	w.resp.SetStatusCode(200)
	w.resp.Header.Add("Server-Timing", "handler;dur=1.2, rpc;dur=0.8;desc=\"x\", fn;dur=0.1")
	w.resp.SetBodyString("hello")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range e.batches {
			e.agg.Add(b)
			e.free <- b[:0]
		}
	}()
	seq := uint64(0)
	allocs := testing.AllocsPerRun(10000, func() {
		seq++
		w.store(ticket{seq: seq, intended: 1}, 0, 2, 3, nil)
	})
	close(e.batches)
	<-done
	if allocs != 0 {
		t.Fatalf("recording allocates %.2f times per request", allocs)
	}
}

// BenchmarkRequest measures the whole request path against a fasthttp
// server in the same process (which allocates nothing per request either,
// so -benchmem shows msbench's own allocations): the closed model flat out,
// and both pacings at a fixed 20,000 req/s, where the generator's wake-ups
// are the cost. cpu-µs/req counts the process, server included; profile it
// with -cpuprofile to see the loop's share.
func BenchmarkRequest(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set("Server-Timing", "app;dur=0.5")
		ctx.SetBodyString("hello")
	}}
	go srv.Serve(ln)
	defer srv.Shutdown()
	target := []Target{{URL: "http://" + ln.Addr().String() + "/"}}
	paced := func(n int, pacing Pacing) Config {
		const rate = 20000
		p, err := pacer.Constant(rate, time.Duration(float64(n)/rate*float64(time.Second))+time.Millisecond, pacer.Uniform, 1)
		if err != nil {
			b.Fatal(err)
		}
		cfg := Config{Targets: target, Connections: 50, Timeout: time.Minute, Pacer: p, Pacing: pacing, MaxRequests: int64(n)}
		if pacing == Coarse {
			cfg.Tick = DefaultTick
		}
		return cfg
	}
	for _, bb := range []struct {
		name string
		cfg  func(n int) Config
	}{
		{"closed", func(n int) Config {
			return Config{Targets: target, Users: 50, Connections: 50, Timeout: time.Minute, MaxRequests: int64(n)}
		}},
		{"precise", func(n int) Config { return paced(n, Precise) }},
		{"coarse", func(n int) Config { return paced(n, Coarse) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			e, err := New(bb.cfg(b.N))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			s, err := e.Run(context.Background(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			if s.Successes != int64(b.N) {
				b.Fatalf("%d of %d succeeded: %v", s.Successes, b.N, s.Errors)
			}
			b.ReportMetric(1e6*s.GeneratorCPUS/float64(b.N), "cpu-µs/req")
		})
	}
}
