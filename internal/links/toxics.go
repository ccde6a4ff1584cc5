package links

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The toxics of a link are registered with Toxiproxy and run in its
// chains. Toxiproxy's own do not fit a lab that measures sub-millisecond
// differences:
//
//   - latency and jitter are whole milliseconds, so 0.5ms cannot be said,
//     and they sleep on Go timers, which wake through epoll_wait with
//     millisecond resolution: a 5 ms delay comes out 5 to 6 ms;
//   - bandwidth is whole KB/s, paced by the same timers;
//   - reset_peer needs the chain's ends to be *net.TCPConn, and it, like
//     timeout once removed, closes its stub and stops reading its input,
//     so that bytes arriving after it strand the goroutines before it.
//
// linkToxic shapes both latency and bandwidth and sleeps on a timerfd,
// which the kernel's high-resolution timers wake within microseconds;
// holdToxic and slowCloseToxic never stop reading unless told to stop, and
// every one of them lets go at once when its proxy stops.
func init() {
	toxics.Register("msbench_link", new(linkToxic))
	toxics.Register("msbench_hold", new(holdToxic))
	toxics.Register("msbench_slow_close", new(slowCloseToxic))
}

// stoppingOf returns the channel closed when the proxy stops; a proxy
// already gone has a closed one.
func stoppingOf(id uint64) <-chan struct{} {
	if p, ok := running.Load(id); ok {
		return p.(*Proxy).stopping
	}
	closed := make(chan struct{})
	close(closed)
	return closed
}

// maxSleep bounds one sleep of a toxic, so that it answers an interrupt
// (a fault added or removed) or a stop within it.
const maxSleep = 10 * time.Millisecond

// linkToxic delays each chunk of one direction: it leaves when the link
// has serialised it at the bandwidth after the chunks before it, and
// arrives a latency ± jitter later, never before the chunk ahead of it.
// Delays are counted from when the proxy read the chunk, so that chunks
// in flight overlap as on a wire.
type linkToxic struct {
	Proxy       uint64 `json:"proxy"`
	LatencyNs   int64  `json:"latency_ns"`
	JitterNs    int64  `json:"jitter_ns"`
	Bps         int64  `json:"bps"`
	HandshakeNs int64  `json:"handshake_ns"` // nothing leaves before this since the connection opened
}

// linkState is one connection's, kept across interrupts.
type linkState struct {
	opened      time.Time
	lastDepart  time.Time
	lastArrival time.Time
	pending     *stream.StreamChunk // read, not yet delivered
	due         time.Time
	closeDue    time.Time // when the end of the stream, once read, arrives
}

// GetBufferSize is the chunks queued before the toxic: enough for many
// chunks in flight, few enough that a slow link pushes back on the sender
// instead of queueing seconds of data in the proxy.
func (t *linkToxic) GetBufferSize() int { return 128 }

func (t *linkToxic) NewState() any { return &linkState{opened: time.Now()} }

func (t *linkToxic) arrival(st *linkState, c *stream.StreamChunk) time.Time {
	depart := c.Timestamp
	if depart.Before(st.lastDepart) {
		depart = st.lastDepart
	}
	if open := st.opened.Add(time.Duration(t.HandshakeNs)); depart.Before(open) {
		depart = open
	}
	if t.Bps > 0 {
		depart = depart.Add(time.Duration(float64(len(c.Data)) * 8 * 1e9 / float64(t.Bps)))
	}
	delay := t.LatencyNs
	if t.JitterNs > 0 {
		delay += rand.Int64N(2*t.JitterNs+1) - t.JitterNs
	}
	arrive := depart.Add(time.Duration(max(delay, 0)))
	if arrive.Before(st.lastArrival) {
		arrive = st.lastArrival
	}
	st.lastDepart, st.lastArrival = depart, arrive
	return arrive
}

func (t *linkToxic) Pipe(stub *toxics.ToxicStub) {
	st, ok := stub.State.(*linkState)
	if !ok {
		st = t.NewState().(*linkState)
		stub.State = st
	}
	stopping := stoppingOf(t.Proxy)
	clock := newSleeper()
	defer clock.close()
	for {
		if st.pending == nil {
			select {
			case <-stub.Interrupt:
				return
			case c := <-stub.Input:
				if c == nil {
					t.close(stub, st, clock, stopping)
					return
				}
				st.pending, st.due = c, t.arrival(st, c)
			}
		}
		if !waitUntil(stub, clock, stopping, st.due) {
			return
		}
		select {
		case stub.Output <- st.pending:
			st.pending = nil
		case <-stub.Interrupt:
			return
		}
	}
}

// close passes the end of the stream on (a FIN) a latency after it was
// read, and never before the bytes ahead of it; interrupted, it goes on
// waiting for the same moment when the toxic runs again and reads the end
// again from its closed input.
func (t *linkToxic) close(stub *toxics.ToxicStub, st *linkState, clock *sleeper, stopping <-chan struct{}) {
	if st.closeDue.IsZero() {
		st.closeDue = time.Now().Add(time.Duration(t.LatencyNs))
		if st.closeDue.Before(st.lastArrival) {
			st.closeDue = st.lastArrival
		}
	}
	if waitUntil(stub, clock, stopping, st.closeDue) {
		stub.Close()
	}
}

// waitUntil sleeps until due, or until the proxy stops; it returns false
// when interrupted first.
func waitUntil(stub *toxics.ToxicStub, clock *sleeper, stopping <-chan struct{}, due time.Time) bool {
	for {
		d := time.Until(due)
		if d <= 0 {
			return true
		}
		select {
		case <-stub.Interrupt:
			return false
		case <-stopping:
			return true
		default:
		}
		clock.sleep(min(d, maxSleep))
	}
}

// holdToxic is a black hole: it passes nothing until it is removed (then
// what it held flows on) or its proxy stops.
type holdToxic struct {
	Proxy uint64 `json:"proxy"`
}

func (t *holdToxic) Pipe(stub *toxics.ToxicStub) {
	select {
	case <-stub.Interrupt:
		return
	case <-stoppingOf(t.Proxy):
		pass(stub)
	}
}

// pass forwards chunks until the end of the stream or an interrupt.
func pass(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			stub.Output <- c
		}
	}
}

// slowCloseToxic passes the bytes and holds the end of the stream (the
// close) for DelayNs.
type slowCloseToxic struct {
	Proxy   uint64 `json:"proxy"`
	DelayNs int64  `json:"delay_ns"`
}

func (t *slowCloseToxic) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				select {
				case <-time.After(time.Duration(t.DelayNs)):
				case <-stoppingOf(t.Proxy):
				case <-stub.Interrupt:
					// The next toxic in this place reads the end again
					// from the closed input.
					return
				}
				stub.Close()
				return
			}
			stub.Output <- c
		}
	}
}
