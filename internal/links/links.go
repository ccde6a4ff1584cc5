// Package links emulates the network between hosts on one machine: a link
// is an in-process TCP proxy on a loopback port that delays the bytes
// crossing it (latency and jitter, each way), paces them (bandwidth, each
// way) and can have faults injected and cleared while it runs (reset,
// timeout, slow_close). The kernel here has no netem, so the emulation is
// done in user space by Toxiproxy's toxic chains
// (github.com/Shopify/toxiproxy/v2), embedded as a library: its ToxicLink
// and ToxicCollection carry the bytes through a chain of toxics that can be
// changed on live connections without losing a byte. The toxics themselves
// are this package's (see toxics.go for why not Toxiproxy's own), and so is
// the accept loop, which must own the connections to reset them and to
// close every one of them on Stop.
package links

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/rs/zerolog"
)

// Spec says what a link does to the bytes that cross it, in each direction
// alike, so that a round trip gains twice the latency.
type Spec struct {
	Latency time.Duration // one way
	// Jitter spreads each delay uniformly over Latency ± Jitter (never
	// below zero); bytes are never reordered.
	Jitter time.Duration
	// Bandwidth is in bits per second, each way; 0 is no limit. The
	// payload is paced, not TCP/IP headers.
	Bandwidth int64
}

func (s Spec) String() string {
	out := "latency " + s.Latency.String()
	if s.Jitter > 0 {
		out += " ± " + s.Jitter.String()
	}
	if s.Bandwidth > 0 {
		out += ", bandwidth " + FormatBandwidth(s.Bandwidth)
	}
	return out
}

// Validate reports a setting that cannot be emulated.
func (s Spec) Validate() error {
	switch {
	case s.Latency < 0:
		return fmt.Errorf("latency %s is negative", s.Latency)
	case s.Jitter < 0:
		return fmt.Errorf("jitter %s is negative", s.Jitter)
	case s.Bandwidth < 0:
		return fmt.Errorf("bandwidth %d bps is negative", s.Bandwidth)
	}
	return nil
}

// ParseDuration reads a latency or jitter: a Go duration such as 0.5ms,
// 2ms or 100us, or 0; never negative.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 0.5ms or 2ms, got %q", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("want a duration of at least 0, got %q", s)
	}
	return d, nil
}

var bandwidthUnits = []struct {
	suffix string
	mult   float64
}{{"gbps", 1e9}, {"mbps", 1e6}, {"kbps", 1e3}, {"bps", 1}}

// ParseBandwidth reads a rate in bits per second: 10Mbps, 1Gbps, 512kbps,
// 2.5Gbps (decimal units, as links are sold).
func ParseBandwidth(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range bandwidthUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			bps := v * u.mult
			if err != nil || math.IsNaN(bps) || bps < 1 || bps > 1e13 {
				break
			}
			return int64(bps), nil
		}
	}
	return 0, fmt.Errorf("want a bandwidth such as 10Mbps, 1Gbps or 512kbps, got %q", s)
}

// FormatBandwidth writes bits per second as ParseBandwidth reads them.
func FormatBandwidth(bps int64) string {
	for _, u := range bandwidthUnits {
		if float64(bps) >= u.mult {
			return strconv.FormatFloat(float64(bps)/u.mult, 'g', -1, 64) + map[string]string{"gbps": "Gbps", "mbps": "Mbps", "kbps": "kbps", "bps": "bps"}[u.suffix]
		}
	}
	return strconv.FormatInt(bps, 10) + "bps"
}

// Fault is what a link does to its connections besides delaying them.
type Fault string

const (
	// None clears any fault.
	None Fault = "none"
	// Reset resets every open connection (an RST to both ends) and every
	// new one as soon as it is accepted, until cleared: Toxiproxy's
	// reset_peer with no timeout.
	Reset Fault = "reset"
	// Timeout is a black hole: nothing crosses, in either direction, not
	// even a close, until cleared; then what was held flows on, as TCP
	// retransmissions would deliver it after a partition heals.
	// Connections opened meanwhile are accepted and held alike.
	Timeout Fault = "timeout"
	// SlowClose holds each close (FIN) for a while before passing it on.
	SlowClose Fault = "slow_close"
)

// Faults lists the faults a link takes, None first.
var Faults = []string{string(None), string(Reset), string(Timeout), string(SlowClose)}

// ParseFault reads a fault's name.
func ParseFault(s string) (Fault, error) {
	for _, f := range Faults {
		if s == f {
			return Fault(f), nil
		}
	}
	return "", fmt.Errorf("%q is not a fault (known: %s)", s, strings.Join(Faults, ", "))
}

// DefaultSlowClose is how long SlowClose holds a close when no delay is given.
const DefaultSlowClose = time.Second

// stopWait bounds how long Stop waits for the connections' goroutines.
const stopWait = 5 * time.Second

// Proxy is one running link: it listens on a loopback port and forwards
// every connection to the upstream address through the link's toxics.
type Proxy struct {
	name     string
	upstream string
	spec     Spec
	id       uint64
	ln       *net.TCPListener
	tp       *toxiproxy.Proxy
	stopping chan struct{} // closed by Stop: every wait of a toxic ends
	dialCtx  context.Context
	cancel   context.CancelFunc
	accepted atomic.Int64
	acceptWG sync.WaitGroup // the accept loop and dials in progress
	connWG   sync.WaitGroup // connections until both directions are done

	// hold is closed when a Timeout fault on a direct link ends; nil
	// while none holds. See relay.
	hold atomic.Pointer[chan struct{}]

	mu        sync.Mutex // guards what follows and serialises SetFault and Stop
	conns     map[*pair]struct{}
	fault     Fault
	slowClose time.Duration // SlowClose's delay while it is the fault
	toxics    []string      // names of the current fault's toxics
	stopped   bool
	nextID    uint64
}

var (
	serverOnce sync.Once
	server     *toxiproxy.ApiServer
	proxyIDs   atomic.Uint64
	running    sync.Map // id → *Proxy, for the toxics to find their proxy
)

// toxiServer is the Toxiproxy server every link's toxic chains belong to;
// its HTTP API is never started, and it logs nothing.
func toxiServer() *toxiproxy.ApiServer {
	serverOnce.Do(func() {
		server = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	})
	return server
}

// Start listens on listen (a loopback address such as 127.0.0.1:0) and
// forwards each connection to upstream through a link with spec; upstream
// need not be listening yet, as each connection dials it when it opens.
func Start(name, listen, upstream string, spec Spec) (*Proxy, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	addr, err := net.ResolveTCPAddr("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	if !addr.IP.IsLoopback() {
		return nil, fmt.Errorf("link %s: listen on a loopback address, not %s", name, listen)
	}
	ln, err := net.ListenTCP("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	p := &Proxy{
		name:     name,
		upstream: upstream,
		spec:     spec,
		id:       proxyIDs.Add(1),
		ln:       ln,
		stopping: make(chan struct{}),
		conns:    map[*pair]struct{}{},
		fault:    None,
	}
	p.dialCtx, p.cancel = context.WithCancel(context.Background())
	// Never started: this package accepts the connections and hands them
	// to the proxy's toxic chains.
	p.tp = toxiproxy.NewProxy(toxiServer(), name, ln.Addr().String(), upstream)
	running.Store(p.id, p)
	shape := linkToxic{
		Proxy:     p.id,
		LatencyNs: int64(spec.Latency),
		JitterNs:  int64(spec.Jitter),
		Bps:       spec.Bandwidth,
		// The handshake's round trip: a real connection's first bytes
		// cannot leave before it, and a proxy completes it at once.
		HandshakeNs: 2 * int64(spec.Latency),
	}
	for _, dir := range []string{"upstream", "downstream"} {
		if err := p.addToxic("shape_"+dir, "msbench_link", dir, shape); err != nil {
			ln.Close()
			running.Delete(p.id)
			return nil, fmt.Errorf("link %s: %w", name, err)
		}
	}
	p.acceptWG.Add(1)
	go p.accept()
	return p, nil
}

func (p *Proxy) addToxic(name, kind, dir string, attrs any) error {
	body, err := json.Marshal(map[string]any{"name": name, "type": kind, "stream": dir, "toxicity": 1, "attributes": attrs})
	if err != nil {
		return err
	}
	_, err = p.tp.Toxics.AddToxicJson(strings.NewReader(string(body)))
	return err
}

// Name is the link's name, e.g. gateway>rpcserver.
func (p *Proxy) Name() string { return p.name }

// Addr is where the link listens: what its clients are told to dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstream is the address the link forwards to.
func (p *Proxy) Upstream() string { return p.upstream }

// Spec is the link's emulation.
func (p *Proxy) Spec() Spec { return p.spec }

// Accepted counts the connections the link has accepted.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Open counts the connections the link is carrying.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Fault is the fault in force, None if none.
func (p *Proxy) Fault() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// SetFault replaces the fault in force by f (None clears it); delay is how
// long SlowClose holds a close (0 for DefaultSlowClose) and must be 0 for
// the other faults.
func (p *Proxy) SetFault(f Fault, delay time.Duration) error {
	if _, err := ParseFault(string(f)); err != nil {
		return err
	}
	if delay < 0 || (delay > 0 && f != SlowClose) {
		return fmt.Errorf("link %s: a delay is for %s only, and positive", p.name, SlowClose)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return fmt.Errorf("link %s: stopped", p.name)
	}
	ctx := context.Background()
	var errs []error
	for _, name := range p.toxics {
		errs = append(errs, p.tp.Toxics.RemoveToxic(ctx, name))
	}
	p.toxics = nil
	p.fault = f
	if p.direct() {
		p.setDirectFault(f, delay)
		return nil
	}
	switch f {
	case Reset:
		for c := range p.conns {
			c.reset()
		}
	case Timeout, SlowClose:
		kind, attrs := "msbench_hold", any(holdToxic{Proxy: p.id})
		if f == SlowClose {
			if delay == 0 {
				delay = DefaultSlowClose
			}
			kind, attrs = "msbench_slow_close", slowCloseToxic{Proxy: p.id, DelayNs: int64(delay)}
		}
		for _, dir := range []string{"upstream", "downstream"} {
			name := string(f) + "_" + dir
			if err := p.addToxic(name, kind, dir, attrs); err != nil {
				errs = append(errs, err)
				continue
			}
			p.toxics = append(p.toxics, name)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("link %s: fault %s: %w", p.name, f, err)
	}
	return nil
}

func (p *Proxy) accept() {
	defer p.acceptWG.Done()
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			select {
			case <-p.stopping:
				return
			case <-time.After(5 * time.Millisecond):
				continue // out of descriptors, say: try again
			}
		}
		p.accepted.Add(1)
		p.mu.Lock()
		refuse := p.stopped || p.fault == Reset
		if !refuse {
			p.acceptWG.Add(1)
		}
		p.mu.Unlock()
		if refuse {
			rst(c)
			continue
		}
		go p.connect(c)
	}
}

// connect dials the upstream for a client and starts the toxic chains of
// both directions; a refused dial resets the client, as the upstream would
// have.
func (p *Proxy) connect(client *net.TCPConn) {
	defer p.acceptWG.Done()
	var d net.Dialer
	conn, err := d.DialContext(p.dialCtx, "tcp", p.upstream)
	if err != nil {
		rst(client)
		return
	}
	server := conn.(*net.TCPConn)
	p.mu.Lock()
	if p.stopped || p.fault == Reset {
		p.mu.Unlock()
		rst(client)
		rst(server)
		return
	}
	p.nextID++
	c := &pair{proxy: p, client: client, server: server}
	p.conns[c] = struct{}{}
	p.connWG.Add(1)
	if p.direct() {
		go p.relay(c, client, server)
		go p.relay(c, server, client)
		p.mu.Unlock()
		return
	}
	name := strconv.FormatUint(p.nextID, 10)
	// Under the lock, so that a fault set meanwhile waits until the
	// chains exist and reaches them.
	p.tp.Toxics.StartLink(toxiServer(), name+"upstream", client, &sink{pair: c, dst: server}, stream.Upstream)
	p.tp.Toxics.StartLink(toxiServer(), name+"downstream", server, &sink{pair: c, dst: client}, stream.Downstream)
	p.mu.Unlock()
}

// Stop closes the listener and every connection, and returns once every
// goroutine of every connection has ended (or after a bound, with an
// error). Held and delayed bytes are let go at once into the closed
// connections. It is idempotent.
func (p *Proxy) Stop() error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	close(p.stopping)
	p.cancel()
	p.release()
	p.ln.Close()
	for c := range p.conns {
		c.close()
	}
	p.mu.Unlock()
	p.acceptWG.Wait()
	done := make(chan struct{})
	go func() { p.connWG.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-time.After(stopWait):
		err = fmt.Errorf("link %s: %d connections still open %s after stop", p.name, p.Open(), stopWait)
	}
	running.Delete(p.id)
	return err
}

// pair is one proxied connection: the client's and the upstream's ends.
type pair struct {
	proxy          *Proxy
	client, server *net.TCPConn
	ended          atomic.Int32 // directions whose chain has ended
}

func (c *pair) close() {
	c.client.Close()
	c.server.Close()
}

// reset closes both ends with an RST (SO_LINGER 0), as reset_peer does.
func (c *pair) reset() {
	rst(c.client)
	rst(c.server)
}

func rst(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}

// directionEnded is called as each direction's chain ends; after both the
// connection is gone.
func (c *pair) directionEnded() {
	if c.ended.Add(1) < 2 {
		return
	}
	c.close()
	p := c.proxy
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.connWG.Done()
}

// sink is the destination of one direction's chain. Toxiproxy's writer
// stops reading its chain at the first failed write, which would strand
// the toxics still holding bytes; a sink never fails: after a failed
// write it closes both ends (so that both chains end) and swallows the
// rest. At the end of the stream it half-closes its end, keeping TCP's
// half-close, and counts the direction done.
type sink struct {
	pair   *pair
	dst    *net.TCPConn
	failed bool
}

func (s *sink) Write(b []byte) (int, error) {
	if !s.failed {
		if _, err := s.dst.Write(b); err != nil {
			s.failed = true
			s.pair.close()
		}
	}
	return len(b), nil
}

func (s *sink) Close() error {
	s.dst.CloseWrite()
	s.pair.directionEnded()
	return nil
}

// direct reports whether the link shapes nothing (no latency, jitter or
// bandwidth), so that each direction of a connection is one goroutine
// copying from one end to the other (relay) instead of Toxiproxy's chain
// of three goroutines handing each chunk on through channels. On a
// 2-core VM every hand-off can wake a thread, 25-30 µs of CPU: two
// 0 ms links through the chains cost the generator's core about
// 200 µs per request in faas-gateway's /empty step, three quarters of
// that core.
func (p *Proxy) direct() bool { return p.spec == Spec{} }

// setDirectFault is SetFault on a direct link, under p.mu: Timeout holds
// every relay's next write (and end of stream) until the fault changes,
// SlowClose holds each end of stream for delay, Reset ends every
// connection with an RST.
func (p *Proxy) setDirectFault(f Fault, delay time.Duration) {
	p.slowClose = 0
	switch f {
	case Reset:
		for c := range p.conns {
			c.reset()
		}
	case SlowClose:
		p.slowClose = cmp.Or(delay, DefaultSlowClose)
	}
	if f == Timeout {
		if p.hold.Load() == nil {
			held := make(chan struct{})
			p.hold.Store(&held)
		}
		return
	}
	p.release()
}

// release lets go of what a Timeout fault holds.
func (p *Proxy) release() {
	if held := p.hold.Swap(nil); held != nil {
		close(*held)
	}
}

// relayBuffer is one relay's chunk: as much as a read usually gives.
const relayBuffer = 32 << 10

// relay copies one direction of a direct link's connection until the end
// of the stream, which it passes on as a half-close, keeping TCP's; a
// failed write closes both ends, as a sink does.
func (p *Proxy) relay(c *pair, src, dst *net.TCPConn) {
	defer c.directionEnded()
	buf := make([]byte, relayBuffer)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, err := dst.Write(buf[:n]); err != nil {
				c.close()
				return
			}
		}
		if err != nil {
			break
		}
	}
	p.wait()
	p.mu.Lock()
	delay := p.slowClose
	p.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-p.stopping:
		}
	}
	dst.CloseWrite()
}

// wait returns once no Timeout fault holds the link, or it stops.
func (p *Proxy) wait() {
	if held := p.hold.Load(); held != nil {
		select {
		case <-*held:
		case <-p.stopping:
		}
	}
}
