package apitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/resources"
)

const (
	// maxStreams is the most calls a gRPC service takes at once on one
	// connection; surplusStreams how many a check opens beyond it.
	maxStreams     = 1000
	surplusStreams = 20
	// idleTimeout is the services' KEEP_ALIVE_TIMEOUT_MS, the default:
	// how long they keep a connection without calls.
	idleTimeout = 5 * time.Second
	// idleClose is when at the latest a service closes an idle connection:
	// grpc-js looks at a connection when its timer fires, and one that has
	// been idle a moment less than idleTimeout by the wall clock (the timer
	// counts from the event loop's cached time, a little earlier) waits a
	// second round.
	idleClose = 2*idleTimeout + h2Margin
	// shortAge is MAX_CONNECTION_AGE_MS of the product service
	// checkConnectionAge calls: how long it keeps any connection, however
	// busy.
	shortAge = 2 * time.Second
	// h2Margin is the time allowed beyond a limit for a service to act on
	// it, generous: a check opens a thousand streams on a busy machine.
	h2Margin = 5 * time.Second
	// memGrowth bounds how much a service's memory (its cgroup's, as a
	// run accounts it) may grow while a check holds its thousand
	// half-sent calls (each some 6 KB).
	memGrowth = 64 << 20
)

// h2Conn is a raw HTTP/2 connection to a gRPC service, for what no gRPC
// client sends: calls left half-sent, connections left idle.
type h2Conn struct {
	conn   net.Conn
	mu     sync.Mutex // for writes
	fr     *http2.Framer
	enc    *hpack.Encoder
	block  bytes.Buffer
	stream uint32 // the last stream opened
}

// dialH2 opens a connection and sends the preface and empty settings.
func dialH2(t *testing.T, addr string) *h2Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &h2Conn{conn: conn}
	c.fr = http2.NewFramer(conn, bufio.NewReader(conn))
	c.enc = hpack.NewEncoder(&c.block)
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := c.write(func(fr *http2.Framer) error { return fr.WriteSettings() }); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *h2Conn) write(frames func(fr *http2.Framer) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return frames(c.fr)
}

// call opens a stream calling method with data, which ends the client's
// side if end; it returns the stream's id.
func (c *h2Conn) call(method string, data []byte, end bool) (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stream += 2
	if c.stream == 2 {
		c.stream = 1
	}
	c.block.Reset()
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", method}, {":authority", "ipc.test"},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return 0, err
		}
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: c.stream, BlockFragment: c.block.Bytes(), EndHeaders: true}); err != nil {
		return 0, err
	}
	return c.stream, c.fr.WriteData(c.stream, end, data)
}

// read reads the next frame by deadline, acknowledging settings, and
// returns it, or nil and the error that ended the connection.
func (c *h2Conn) read(deadline time.Time) (http2.Frame, error) {
	c.conn.SetReadDeadline(deadline)
	f, err := c.fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
		if err := c.write(func(fr *http2.Framer) error { return fr.WriteSettingsAck() }); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// waitClosed reads until the service ends the connection (a GOAWAY, or
// the connection closed) and says how: "goaway <code> <debug data>", or
// "closed", or "open" if it is still open at deadline.
func (c *h2Conn) waitClosed(deadline time.Time) string {
	for {
		f, err := c.read(deadline)
		switch {
		case os.IsTimeout(err):
			return "open"
		case err != nil:
			return "closed"
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			return strings.TrimSpace(fmt.Sprintf("goaway %v %s", g.ErrCode, g.DebugData()))
		}
	}
}

// halfSentMessage is what a hostile client sends of a call's request: the
// first 3 of the 5 bytes every gRPC message starts with.
var halfSentMessage = []byte{0, 0, 0}

// checkGRPCExhaustion does to every gRPC service what exhausted them: a
// connection opens more calls than the service takes at once, each sending
// its headers and a part of its message, never the rest, and other
// connections stay idle. A service must say how many calls it takes at
// once and refuse those beyond, reset the half-sent ones once the time a
// request may take to arrive (REQUEST_TIMEOUT_MS) has passed, close the
// connections left idle (KEEP_ALIVE_TIMEOUT_MS), stay within bounded
// memory and keep serving. Before, a service took 2³²−1 calls at once
// and kept every half-sent call and idle connection for ever: 20,000 such
// calls took shipping from 78 to 202 MiB, and reviews died of them.
func checkGRPCExhaustion(ctx context.Context, t *testing.T, d *deployment) {
	// One service at a time opens its thousands of streams: with five at
	// once on a busy machine, a service could take longer than the
	// arrival bound to read them all.
	var opening sync.Mutex
	t.Run("services", func(t *testing.T) {
		for _, name := range services {
			s := d.services[name]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				checkExhaustion(ctx, t, d, s, &opening)
			})
		}
	})
	apicheck.WantStatus(t, "page after the half-sent calls", apicheck.Get(t, d.gateway.base+"/products/7"), http.StatusOK)
}

func checkExhaustion(ctx context.Context, t *testing.T, d *deployment, s *program, opening *sync.Mutex) {
	idle := dialH2(t, s.addr)
	defer idle.conn.Close()
	bare, err := net.Dial("tcp", s.addr) // not even a preface
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	dialed := time.Now()
	// Each connection is watched from now on, beside the others: read one
	// after another, a connection's deadline could pass while the check
	// waits for another, and a read past its deadline fails without
	// looking at what the service already sent.
	idleEnd := watch(func() string { return idle.waitClosed(dialed.Add(idleClose)) })
	bareEnd := watch(func() string {
		bare.SetReadDeadline(dialed.Add(idleClose))
		if _, err := io.Copy(io.Discard, bare); err != nil {
			return "open: " + err.Error()
		}
		return "closed"
	})

	c, lastEnded := func() (*h2Conn, time.Time) {
		opening.Lock()
		defer opening.Unlock()
		return checkHalfSent(t, d, s)
	}()
	defer c.conn.Close()

	// Every stream ended, the connection holds nothing: it is idle.
	if how := c.waitClosed(lastEnded.Add(idleClose)); how == "open" {
		t.Errorf("%s kept the connection of the half-sent calls %v after they ended, idle, want it closed after %v", s.name, idleClose, idleTimeout)
	}
	end := <-idleEnd
	if end.how == "open" {
		t.Errorf("%s kept a connection without calls %v, want it closed after %v", s.name, idleClose, idleTimeout)
	} else if took := end.at.Sub(dialed); took < idleTimeout*9/10 {
		t.Errorf("%s closed a connection without calls after %v (%s), want after %v", s.name, took, end.how, idleTimeout)
	}
	if end := <-bareEnd; end.how != "closed" {
		t.Errorf("%s kept a connection that sent nothing %v (%s), want it closed after %v", s.name, idleClose, end.how, idleTimeout)
	}

	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var reply []byte
	if err := conn.Invoke(ctx, methods[s.name], idRequest(s.name, 7), &reply, grpc.ForceCodec(rawCodec{})); err != nil || len(reply) == 0 {
		t.Errorf("%s, a call after the half-sent ones: %v", s.name, err)
	}
}

// ending is how and when a watched connection ended.
type ending struct {
	how string
	at  time.Time
}

// watch runs wait, which reads a connection until it ends or its
// deadline, and sends how it ended and when.
func watch(wait func() string) <-chan ending {
	ended := make(chan ending, 1)
	go func() {
		how := wait()
		ended <- ending{how, time.Now()}
	}()
	return ended
}

// halfSent is how a service ended the calls one connection left half-sent.
type halfSent struct {
	ended   map[uint32]bool
	refused int       // streams refused (REFUSED_STREAM)
	early   int       // others ended before the arrival bound
	goaway  string    // how the service ended the connection, if it did
	last    time.Time // when the last stream ended
}

// sendHalfSent opens n half-sent calls on c and reads how the service ends
// them, until done says enough, the connection ends, or deadline.
func sendHalfSent(s *program, c *h2Conn, n int, deadline time.Time, done func(halfSent) bool) halfSent {
	began := time.Now()
	go func() {
		for range n {
			if _, err := c.call(methods[s.name], halfSentMessage, false); err != nil {
				return // the service ended the connection: read says so
			}
		}
	}()
	h := halfSent{ended: map[uint32]bool{}}
	for !done(h) {
		f, err := c.read(deadline)
		if err != nil {
			if !os.IsTimeout(err) {
				h.goaway = "closed"
			}
			return h
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.ErrCode == http2.ErrCodeRefusedStream {
				h.refused++
			} else if time.Since(began) < requestTimeout*9/10 {
				h.early++
			}
			h.ended[f.StreamID] = true
			h.last = time.Now()
		case *http2.HeadersFrame:
			if f.StreamEnded() {
				h.ended[f.StreamID] = true
				h.last = time.Now()
			}
		case *http2.GoAwayFrame:
			h.goaway = strings.TrimSpace(fmt.Sprintf("goaway %v %s", f.ErrCode, f.DebugData()))
			return h
		}
	}
	return h
}

// checkHalfSent opens half-sent calls on two connections to s, which must
// advertise maxStreams at most. One opens maxStreams+surplusStreams: the
// service refuses the surplus, stream by stream (REFUSED_STREAM) or by
// ending the connection. The other opens maxStreams: the service ends
// each (here: a reset) once the arrival bound, requestTimeout, has passed,
// none before. Meanwhile its memory grows no more than memGrowth.
// checkHalfSent returns the second connection and when its last stream
// ended.
func checkHalfSent(t *testing.T, d *deployment, s *program) (*h2Conn, time.Time) {
	memBefore := memoryOf(t, d, s).CurrentMemBytes
	if err := d.dep.ResetPeak(s.name); err != nil {
		t.Fatal(err)
	}
	began := time.Now()

	over := dialH2(t, s.addr)
	defer over.conn.Close()
	f, err := over.read(began.Add(h2Margin))
	settings, ok := f.(*http2.SettingsFrame)
	if err != nil || !ok {
		t.Fatalf("%s: first frame %v %v, want its settings", s.name, f, err)
	}
	if limit, ok := settings.Value(http2.SettingMaxConcurrentStreams); !ok || limit > maxStreams {
		t.Errorf("%s takes %d calls at once on a connection (given: %v), want at most %d", s.name, limit, ok, maxStreams)
	}
	h := sendHalfSent(s, over, maxStreams+surplusStreams, time.Now().Add(requestTimeout+h2Margin), func(h halfSent) bool {
		return h.refused >= surplusStreams
	})
	t.Logf("%s: %d calls opened at once: %d refused, %d ended, then %q, after %v", s.name, maxStreams+surplusStreams, h.refused, len(h.ended), h.goaway, time.Since(began).Round(time.Millisecond))
	if h.refused < surplusStreams && h.goaway == "" {
		t.Errorf("%s took %d calls at once on one connection (%d refused), want it to refuse those beyond %d", s.name, maxStreams+surplusStreams, h.refused, maxStreams)
	}

	c := dialH2(t, s.addr)
	if _, err := c.read(time.Now().Add(h2Margin)); err != nil {
		t.Fatalf("%s: settings: %v", s.name, err)
	}
	began = time.Now()
	h = sendHalfSent(s, c, maxStreams, began.Add(requestTimeout+2*h2Margin), func(h halfSent) bool {
		return len(h.ended) == maxStreams
	})
	if h.last.IsZero() {
		h.last = time.Now()
	}
	peak := memoryOf(t, d, s).PeakMemBytes
	t.Logf("%s: %d half-sent calls: %d ended after %v, %d refused, %d early, then %q; memory %d MiB before, %d MiB at most",
		s.name, maxStreams, len(h.ended), h.last.Sub(began).Round(time.Millisecond), h.refused, h.early, h.goaway, memBefore>>20, peak>>20)
	if len(h.ended) < maxStreams || h.refused > 0 || h.early > 0 {
		t.Errorf("%s ended %d of %d half-sent calls within %v (%d refused, %d before %v), want all, at the arrival bound %v",
			s.name, len(h.ended), maxStreams, requestTimeout+2*h2Margin, h.refused, h.early, requestTimeout*9/10, requestTimeout)
	}
	if h.goaway != "" {
		t.Fatalf("%s ended the connection of %d half-sent calls (%s), want it to end the calls", s.name, maxStreams, h.goaway)
	}
	if peak-memBefore > memGrowth {
		t.Errorf("%s grew by %d MiB holding half-sent calls, want at most %d MiB", s.name, (peak-memBefore)>>20, memGrowth>>20)
	}
	return c, h.last
}

// memoryOf is what s uses, as a run accounts it.
func memoryOf(t *testing.T, d *deployment, s *program) resources.Usage {
	t.Helper()
	u, err := d.dep.Usage(s.name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkConnectionAge calls d's product service, which keeps a connection
// shortAge at most: a connection busy with calls is told to go (GOAWAY
// "max_age") once its age is up, and the gateway, whose connection is
// replaced every shortAge, serves every page meanwhile.
func checkConnectionAge(t *testing.T, d *deployment) {
	s, g := d.services["product"], d.gateway
	c := dialH2(t, s.addr)
	defer c.conn.Close()
	dialed := time.Now()
	// A call every 200 ms keeps the connection from being idle.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for tick := time.Tick(200 * time.Millisecond); ; {
			if _, err := c.call(methods["product"], grpcFrame(idRequest("product", 7)), true); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-tick:
			}
		}
	}()
	// grpc-js draws each connection's age within ±10% of the bound.
	how := c.waitClosed(dialed.Add(shortAge*11/10 + h2Margin))
	took := time.Since(dialed)
	if how != "goaway NO_ERROR max_age" || took < shortAge*8/10 {
		t.Errorf("a busy connection to a service whose connections may last %v: %s after %v, want goaway NO_ERROR max_age after %v", shortAge, how, took, shortAge)
	}

	pages, bad := 0, 0
	for end := time.Now().Add(3 * shortAge); time.Now().Before(end); pages++ {
		if r, err := fetch(g.base+"/products/7", nil); err != nil || r.Status != http.StatusOK {
			if bad++; bad <= 3 {
				t.Errorf("page while the product service replaces the gateway's connection: %v %v", r, err)
			}
		}
	}
	t.Logf("%d pages over %v, %d not 200", pages, 3*shortAge, bad)
}

// grpcFrame is message in gRPC's framing: uncompressed, its length, it.
func grpcFrame(message []byte) []byte {
	return append([]byte{0, byte(len(message) >> 24), byte(len(message) >> 16), byte(len(message) >> 8), byte(len(message))}, message...)
}
