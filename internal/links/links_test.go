package links

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer echoes every connection back until it closes; it counts the
// bytes it read.
type echoServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() {
				io.Copy(c, c)
				c.Close()
			})
		}
	})
	t.Cleanup(s.close)
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func startLink(t *testing.T, upstream string, spec Spec) *Proxy {
	t.Helper()
	p, err := Start("test", "127.0.0.1:0", upstream, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	return p
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends a small message and reads it back.
func roundTrip(c net.Conn, msg []byte) (time.Duration, error) {
	start := time.Now()
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	back := make([]byte, len(msg))
	if _, err := io.ReadFull(c, back); err != nil {
		return 0, err
	}
	if !bytes.Equal(back, msg) {
		return 0, errors.New("echo differs")
	}
	return time.Since(start), nil
}

// minRTT is the shortest of n round trips of 64 bytes on one connection,
// after one not counted (a new connection pays the handshake). A link may
// deliver late when the machine is busy (a stolen or contended core
// wakes its timer late) but never early, so the shortest round trip is
// the one that shows what the link adds; a median moves with the steal.
func minRTT(t *testing.T, addr string, n int) time.Duration {
	t.Helper()
	c := dial(t, addr)
	msg := bytes.Repeat([]byte("x"), 64)
	var rtts []time.Duration
	for i := range n + 1 {
		d, err := roundTrip(c, msg)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			rtts = append(rtts, d)
		}
	}
	return slices.Min(rtts)
}

func TestLatencyAddsTwiceToRoundTrip(t *testing.T) {
	echo := newEcho(t)
	for _, latency := range []time.Duration{5 * time.Millisecond, 500 * time.Microsecond} {
		p := startLink(t, echo.addr(), Spec{Latency: latency})
		direct := minRTT(t, echo.addr(), 50)
		linked := minRTT(t, p.Addr(), 50)
		added := linked - direct
		t.Logf("latency %s: shortest round trip direct %s, through the link %s: +%s (want +%s)", latency, direct, linked, added, 2*latency)
		if tol := time.Millisecond; added < 2*latency-tol/4 || added > 2*latency+tol {
			t.Errorf("latency %s added %s to the round trip, want %s (-0.25ms, +1ms)", latency, added, 2*latency)
		}
	}
}

func TestHandshakeAndCloseCrossTheLink(t *testing.T) {
	echo := newEcho(t)
	p := startLink(t, echo.addr(), Spec{Latency: 5 * time.Millisecond})
	start := time.Now()
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	// Handshake (2×5 ms) and the round trip (2×5 ms). A busy machine adds
	// to it, never takes away; the upper bound only tells one handshake's
	// delay from a handshake counted twice (30 ms).
	if d := time.Since(start); d < 20*time.Millisecond || d >= 30*time.Millisecond {
		t.Fatalf("first round trip on a new connection took %s, want about 20ms", d)
	}
	// A close crosses the link like the bytes: the echo server's answering
	// close comes back after a round trip.
	start = time.Now()
	c.(*net.TCPConn).CloseWrite()
	if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read %d, %v, want the end", n, err)
	}
	// As above: at least the link's round trip, under twice it.
	if d := time.Since(start); d < 10*time.Millisecond || d >= 20*time.Millisecond {
		t.Fatalf("the close's round trip took %s, want about 10ms", d)
	}
}

func TestJitterKeepsOrderAndMean(t *testing.T) {
	echo := newEcho(t)
	p := startLink(t, echo.addr(), Spec{Latency: 2 * time.Millisecond, Jitter: time.Millisecond})
	c := dial(t, p.Addr())
	// Many small writes in flight at once: reordering would garble them.
	var sent bytes.Buffer
	for i := range 200 {
		msg := []byte(strings.Repeat(string(rune('a'+i%26)), 1+i%7))
		sent.Write(msg)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	back := make([]byte, sent.Len())
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, sent.Bytes()) {
		t.Fatal("bytes came back out of order")
	}
	var rtts []time.Duration
	for range 40 {
		d, err := roundTrip(c, []byte("ping"))
		if err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, d)
	}
	slices.Sort(rtts)
	lo, med, hi := rtts[0], rtts[len(rtts)/2], rtts[len(rtts)-1]
	t.Logf("latency 2ms ± 1ms: round trips %s … %s … %s", lo, med, hi)
	if med < 3*time.Millisecond || med > 5500*time.Microsecond || hi-lo < 500*time.Microsecond {
		t.Fatalf("round trips %s … %s … %s, want a median near 4ms and a spread", lo, med, hi)
	}
}

func TestBandwidthLimitsThroughput(t *testing.T) {
	// A sink upstream that reports how many bytes it read and when the
	// last arrived.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, c)
		got <- n
		c.Close()
	}()
	const bps = 20e6
	p := startLink(t, ln.Addr().String(), Spec{Bandwidth: bps})
	c := dial(t, p.Addr())
	const size = 1 << 20
	start := time.Now()
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	n := <-got
	elapsed := time.Since(start)
	rate := float64(n) * 8 / elapsed.Seconds()
	t.Logf("1 MiB through a 20Mbps link in %s: %.1f Mbps", elapsed.Round(time.Millisecond), rate/1e6)
	if n != size || rate > 1.1*bps || rate < 0.8*bps {
		t.Fatalf("%d bytes at %.1f Mbps, want %d at about 20", n, rate/1e6, size)
	}
}

func TestResetFaultAndClear(t *testing.T) {
	for _, spec := range faultSpecs {
		t.Run(spec.String(), func(t *testing.T) { resetFaultAndClear(t, spec) })
	}
}

func resetFaultAndClear(t *testing.T, spec Spec) {
	echo := newEcho(t)
	p := startLink(t, echo.addr(), spec)
	old := dial(t, p.Addr())
	if _, err := roundTrip(old, []byte("before")); err != nil {
		t.Fatal(err)
	}
	if err := p.SetFault(Reset, 0); err != nil {
		t.Fatal(err)
	}
	old.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := roundTrip(old, []byte("during")); err == nil {
		t.Fatal("an open connection survived a reset")
	} else {
		t.Logf("open connection: %v", err)
	}
	// The reset may come before connect returns, or at the first read.
	fresh, err := net.Dial("tcp", p.Addr())
	if err == nil {
		defer fresh.Close()
		fresh.SetDeadline(time.Now().Add(2 * time.Second))
		_, err = roundTrip(fresh, []byte("during"))
	}
	if err == nil {
		t.Fatal("a new connection went through a reset link")
	} else if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("new connection: %v, want a reset", err)
	}
	if err := p.SetFault(None, 0); err != nil {
		t.Fatal(err)
	}
	after := dial(t, p.Addr())
	if _, err := roundTrip(after, []byte("after")); err != nil {
		t.Fatalf("after clearing the reset: %v", err)
	}
}

func TestTimeoutHoldsUntilCleared(t *testing.T) {
	for _, spec := range faultSpecs {
		t.Run(spec.String(), func(t *testing.T) { timeoutHoldsUntilCleared(t, spec) })
	}
}

func timeoutHoldsUntilCleared(t *testing.T, spec Spec) {
	echo := newEcho(t)
	p := startLink(t, echo.addr(), spec)
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("before")); err != nil {
		t.Fatal(err)
	}
	if err := p.SetFault(Timeout, 0); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := roundTrip(c, []byte("held")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("through a black hole: %v, want a timeout", err)
	}
	if err := p.SetFault(None, 0); err != nil {
		t.Fatal(err)
	}
	// What was held comes through once the fault clears.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	back := make([]byte, 4)
	if _, err := io.ReadFull(c, back); err != nil || string(back) != "held" {
		t.Fatalf("after clearing: %q, %v", back, err)
	}
}

func TestSlowCloseDelaysTheClose(t *testing.T) {
	for _, spec := range faultSpecs {
		t.Run(spec.String(), func(t *testing.T) { slowCloseDelaysTheClose(t, spec) })
	}
}

func slowCloseDelaysTheClose(t *testing.T, spec Spec) {
	echo := newEcho(t)
	p := startLink(t, echo.addr(), spec)
	if err := p.SetFault(SlowClose, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("x")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.(*net.TCPConn).CloseWrite()
	// The echo server closes once it sees the end; both ends are held.
	if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read %d, %v, want the end", n, err)
	}
	if d := time.Since(start); d < 550*time.Millisecond || d > 900*time.Millisecond {
		t.Fatalf("the close took %s, want about 600ms (held 300ms each way)", d)
	}
}

// faultSpecs are the two kinds of link a fault must work on: a direct one
// (relays) and a shaped one (Toxiproxy's chains).
var faultSpecs = []Spec{{}, {Latency: 100 * time.Microsecond}}

// Both kinds of link: one shaped through Toxiproxy's chains, one direct.
func TestStopLeavesNothing(t *testing.T) {
	for _, spec := range []Spec{{Latency: 20 * time.Millisecond, Bandwidth: 1e6}, {}} {
		t.Run(spec.String(), func(t *testing.T) { stopLeavesNothing(t, spec) })
	}
}

func stopLeavesNothing(t *testing.T, spec Spec) {
	echo := newEcho(t)
	before := runtime.NumGoroutine()
	p, err := Start("leak", "127.0.0.1:0", echo.addr(), spec)
	if err != nil {
		t.Fatal(err)
	}
	addr := p.Addr()
	var conns []net.Conn
	for i := range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		// Bytes in flight in the toxics, and some held by a black hole.
		c.Write(bytes.Repeat([]byte{byte(i)}, 64<<10))
		if i == 5 {
			time.Sleep(50 * time.Millisecond)
			p.SetFault(Timeout, 0)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if p.Open() != 8 {
		t.Fatalf("%d connections open, want 8", p.Open())
	}
	start := time.Now()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stop took %s", d)
	}
	// Every client sees its connection end.
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("client: %v", err)
		}
		c.Close()
	}
	// The port is free again.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port still taken after stop: %v", err)
	}
	ln.Close()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after stop, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestUpstreamDownResetsTheClient(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	p := startLink(t, dead, Spec{})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		return // reset before connect returned
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := roundTrip(c, []byte("x")); err == nil {
		t.Fatal("a link to nothing answered")
	}
}

func TestStartRefusesOtherThanLoopback(t *testing.T) {
	if _, err := Start("x", "0.0.0.0:0", "127.0.0.1:1", Spec{}); err == nil {
		t.Fatal("listened beyond loopback")
	}
	if _, err := Start("x", "127.0.0.1:0", "127.0.0.1:1", Spec{Latency: -1}); err == nil {
		t.Fatal("took a negative latency")
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"10Mbps": 10e6, "1Gbps": 1e9, "512kbps": 512e3, "2.5 Gbps": 2.5e9, "100bps": 100, "1mbps": 1e6} {
		got, err := ParseBandwidth(in)
		if err != nil || got != want {
			t.Errorf("ParseBandwidth(%q) = %d, %v, want %d", in, got, err, want)
		}
		if back, _ := ParseBandwidth(FormatBandwidth(want)); back != want {
			t.Errorf("FormatBandwidth(%d) = %q does not read back", want, FormatBandwidth(want))
		}
	}
	for _, in := range []string{"", "10", "10MB", "-1Mbps", "0bps", "fastbps", "NaNMbps"} {
		if _, err := ParseBandwidth(in); err == nil {
			t.Errorf("ParseBandwidth(%q) took it", in)
		}
	}
	for in, want := range map[string]time.Duration{"0": 0, "0ms": 0, "0.5ms": 500 * time.Microsecond, "100us": 100 * time.Microsecond} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %s, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "5", "-1ms", "soon"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) took it", in)
		}
	}
	if _, err := ParseFault("explode"); err == nil {
		t.Error("ParseFault took explode")
	}
}
