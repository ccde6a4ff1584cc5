package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loop drives every load, both models, over plain HTTP and HTTPS, from one
// goroutine that sends the arrivals it is given (see arrivals) and times
// every answer the same way. Waking an idle process costs tens of
// microseconds of CPU on a virtual machine (25-30 µs on the machines
// msbench was built on), more than a busy generator spends on a whole
// request, so the loop is built to wake as little as the load allows:
//
//   - It owns every connection as a raw non-blocking socket outside Go's
//     netpoller, so an answer wakes it only when the load needs it to.
//   - The kernel stamps each response's arrival (SO_TIMESTAMPNS), so a
//     response read late is timed as if read at once: every request ends
//     at the kernel's receive time of its last bytes, in both models and
//     both pacings.
//   - The open model sleeps from one arrival's slot to the next and reads
//     the answers at each wake: reading late cannot delay an arrival.
//     Precise pacing wakes at the slot, except that arrivals within
//     preciseWindow behind it share the wake-up; coarse pacing wakes on a
//     grid of ticks. A request that leaves late carries the lag in its
//     corrected latency and in schedule lag.
//   - The closed model waits on the sockets, up to the next user's slot:
//     an answer brings its user's next arrival forward.
//   - When every connection is busy and arrivals wait, it waits on the
//     sockets, so no pacing caps the throughput.
type loop struct {
	e      *Engine
	a      arrivals
	rec    *recorder
	tick   int64 // coarse pacing's grid; 0 otherwise
	window int64 // see arrivals.wake
	early  bool  // wake for answers: the closed model
	polled int64 // ns since base of the open model's last read of answers
	ep     int
	conns  []conn
	idle   []int // connections ready for a request, most recent last
	closed []int // connections never opened or closed since
	busy   int
	expiry int64 // unix ns when the first request in flight may time out
	dials  int   // connections waiting for the handshake
	events []unix.EpollEvent
	oob    []byte
	msg    unix.Msghdr // reused by every read: unix.Recvmsg allocates
	iov    unix.Iovec
	ts     unix.Timespec // the wait's timeout, kept here so it never escapes
	pwait2 bool          // epoll_pwait2 (Linux 5.11): waits end to the ns
	src    feed
	br     *bufio.Reader
	wall   int64 // CLOCK_REALTIME minus e.now(), to place kernel timestamps
	stop   atomic.Bool
}

// collectEvery bounds how long the open model leaves answers unread while
// connections are plentiful.
const collectEvery = time.Millisecond

// preciseWindow is how far behind an arrival's slot precise pacing may send
// the arrivals after it, to wake once for all of them: a quarter of the
// millisecond by which wrk2 (epoll's timeouts) may send late. A wake-up
// from idle costs the generator 25-30 µs of CPU on a VM; at 20,000 req/s
// a 50 µs window woke 5,600 times a second and cost 1.32× wrk2's CPU per
// request, 100 µs 1.22×, 200 µs 1.09×, 300 µs 1.06× (vswrk, 3 rounds each).
const preciseWindow = 250 * time.Microsecond

type connState uint8

const (
	connClosed connState = iota
	connIdle
	connBusy
)

// conn is one keep-alive connection and the request it carries.
type conn struct {
	fd         int
	state      connState
	connecting bool
	t          ticket
	target     uint16
	sent       int64     // unix ns
	out        []byte    // request bytes not yet written
	in         []byte    // response bytes so far
	rx         int64     // kernel arrival time of the last bytes read, unix ns
	tls        *tls.Conn // https, once the handshake is done
	eof        bool
}

// readChunk is the least free space a read offers the kernel.
const readChunk = 16 << 10

// sockaddr is the socket address the loop dials: the one resolveTarget
// checked.
func sockaddr(ap netip.AddrPort) (unix.Sockaddr, int) {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, unix.AF_INET
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}, unix.AF_INET6
}

func (e *Engine) newLoop() (*loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	n := e.cfg.Connections
	l := &loop{
		e:      e,
		rec:    e.newRecorder(),
		tick:   int64(e.cfg.Tick),
		ep:     ep,
		conns:  make([]conn, n),
		idle:   make([]int, 0, n),
		closed: make([]int, 0, n),
		events: make([]unix.EpollEvent, min(n, 256)),
		oob:    make([]byte, unix.CmsgSpace(16)),
	}
	switch {
	case e.cfg.Pacer == nil:
		l.a, l.early = newUsers(e), true
	case e.cfg.Pacing == Precise:
		l.a, l.window = &schedule{e: e}, int64(preciseWindow)
	default:
		l.a = &schedule{e: e}
	}
	_, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(&l.ts)), 0, 0)
	l.pwait2 = errno == 0
	l.br = bufio.NewReaderSize(&l.src, readChunk)
	for i := n - 1; i >= 0; i-- {
		l.conns[i].fd = -1
		l.closed = append(l.closed, i)
	}
	return l, nil
}

// run sends until the arrivals are over or hard ends, then waits for what
// is in flight. It returns how many arrivals were never sent and how long
// sending took.
func (l *loop) run(hard context.Context) (unsent int64, window time.Duration) {
	defer l.drain()
	// AfterFunc on a context already done runs in a goroutine of its own,
	// after the first pass may have sent every due arrival.
	if hard.Err() != nil {
		return l.a.unsent(), 0
	}
	defer context.AfterFunc(hard, func() { l.stop.Store(true) })()
	for {
		now := l.clock()
		waiting := l.sendDue(now, true)
		if !l.early && !waiting && l.busy > 0 && (4*l.busy > 3*len(l.conns) || now-l.polled >= int64(collectEvery)) {
			// Sends first, answers after, and only when connections run
			// short or collectEvery has passed: what arrived is timed
			// already, and a read per wake would cost a system call for
			// a few answers.
			l.polled = now
			l.poll(0)
		}
		l.expire()
		if l.a.over() {
			return 0, time.Since(l.e.base)
		}
		if l.stop.Load() {
			return l.a.unsent(), time.Since(l.e.base)
		}
		l.e.inFlight.Store(int64(l.busy))
		// Let the collector, timers and signal handling run: see sleep.
		runtime.Gosched()
		next, pending := l.a.next()
		// A timeout ends a request, and in the closed model brings its
		// user's next arrival: worth waking for on time.
		expiry := int64(maxSleep)
		if l.busy > 0 {
			expiry = l.expiry - l.e.baseUnix - now
		}
		switch {
		case waiting || l.dials > 0 || !pending:
			// Every connection is busy, or one is being opened, or every
			// user is in flight: the first answer or handshake is worth
			// waking for.
			l.poll(expiry)
		case l.early:
			l.poll(min(next-now, expiry))
		default:
			wake := l.a.wake(l.window)
			if l.tick > 0 {
				wake = ceilTo(wake, l.tick)
			}
			l.sleep(min(wake, now+int64(maxSleep)))
		}
	}
}

// sendDue sends every arrival due by now; true when one waits for a
// connection, in which case the arrivals behind it are not looked at yet.
// It polls for a connection to free only if asked: poll itself calls it.
func (l *loop) sendDue(now int64, canPoll bool) bool {
	polled := !canPoll
	for {
		at, ok := l.a.next()
		if !ok || at > now {
			return false
		}
		i, ok := l.free()
		if !ok {
			if polled || l.stop.Load() {
				// An overdue schedule against a fast server could go
				// round here for ever: stop is checked once per pass
				// over the connections, off the common path.
				return true
			}
			// The answers that came in may have freed one, and sent
			// arrivals on it: the next is looked at again.
			l.poll(0)
			polled = true
			continue
		}
		polled = !canPoll
		t, ok := l.a.take(now, i)
		if !ok {
			l.unfree(i)
			continue
		}
		l.send(i, t)
	}
}

func ceilTo(x, step int64) int64 { return (x + step - 1) / step * step }

// maxSleep bounds how long cancellation can go unnoticed.
const maxSleep = 20 * time.Millisecond

// sleep blocks until offset (ns since base) in a raw system call, which Go's
// scheduler does not see. Parking in the netpoller instead wakes the
// runtime's monitor thread and a second thread on every tick (measured:
// three context switches per tick instead of one), undoing what the loop
// is for. The cost is that nothing else runs on this goroutine's P while it
// sleeps, so the loop yields at every wake; a preemption or a collection
// signals the thread, which ends the call early.
func (l *loop) sleep(offset int64) {
	// Loop until Go's clock agrees: a request sent early would make its
	// latency look shorter than it was.
	for now := l.clock(); now < offset; now = l.clock() {
		l.ts = unix.NsecToTimespec(offset - now)
		_, _, errno := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, 0, uintptr(unsafe.Pointer(&l.ts)), 0, 0, 0)
		if errno == unix.EINTR {
			return
		}
	}
}

// clock returns ns since base and refreshes the offset that places the
// kernel's wall-clock arrival stamps on the engine's monotonic timeline;
// refreshing each wake keeps NTP slewing out of the latencies.
func (l *loop) clock() int64 {
	t := time.Now()
	since := int64(t.Sub(l.e.base))
	l.wall = t.UnixNano() - (l.e.baseUnix + since)
	return since
}

// drain waits for the requests still in flight; the timeout bounds each.
func (l *loop) drain() {
	for l.busy > 0 {
		l.clock()
		l.poll(int64(maxSleep))
		l.expire()
		l.e.inFlight.Store(int64(l.busy))
		runtime.Gosched()
	}
}

func (l *loop) close() {
	for i := range l.conns {
		if l.conns[i].fd >= 0 {
			unix.Close(l.conns[i].fd)
		}
	}
	unix.Close(l.ep)
	l.rec.flush()
	l.rec.release()
}

// free pops a connection for the next request: an open idle one if any,
// else one to open.
func (l *loop) free() (int, bool) {
	for len(l.idle) > 0 {
		i := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		// A connection the server closed while idle stays listed here
		// until popped; its state tells.
		if l.conns[i].state == connIdle {
			return i, true
		}
	}
	if len(l.closed) > 0 {
		i := l.closed[len(l.closed)-1]
		l.closed = l.closed[:len(l.closed)-1]
		return i, true
	}
	return 0, false
}

// unfree gives back a connection free popped.
func (l *loop) unfree(i int) {
	if l.conns[i].state == connIdle {
		l.idle = append(l.idle, i)
	} else {
		l.closed = append(l.closed, i)
	}
}

func (l *loop) send(i int, t ticket) {
	c := &l.conns[i]
	c.t, c.target = t, l.e.mix.pick(t.seq)
	c.in, c.rx, c.eof = c.in[:0], 0, false
	c.sent = l.e.now()
	if l.busy == 0 {
		l.expiry = c.sent + int64(l.e.cfg.Timeout)
	}
	wasClosed := c.state == connClosed
	c.state = connBusy
	l.busy++
	if wasClosed {
		if err := l.dial(i); err != nil {
			l.fail(i, err)
			return
		}
		if c.connecting {
			return
		}
	}
	l.transmit(i)
}

func (l *loop) dial(i int) error {
	c := &l.conns[i]
	fd, err := unix.Socket(l.e.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	c.fd = fd
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return os.NewSyscallError("setsockopt SO_TIMESTAMPNS", err)
	}
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	switch err := unix.Connect(fd, l.e.addr); {
	case errors.Is(err, unix.EINPROGRESS):
		c.connecting = true
		l.dials++
		events = unix.EPOLLOUT
	case err != nil:
		return os.NewSyscallError("connect", err)
	}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(i)}); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// transmit sends the request on a connected socket, after the handshake on
// a new https connection.
func (l *loop) transmit(i int) {
	c := &l.conns[i]
	wire := l.e.targets[c.target].wire
	if l.e.tls == nil {
		c.out = wire
		l.write(i)
		return
	}
	if c.tls == nil {
		if err := l.handshake(i); err != nil {
			l.fail(i, err)
			return
		}
	}
	if _, err := c.tls.Write(wire); err != nil {
		l.fail(i, err)
	}
}

// write sends what the kernel takes; the rest goes when the socket is
// writable again.
func (l *loop) write(i int) {
	c := &l.conns[i]
	for len(c.out) > 0 {
		n, err := unix.Write(c.fd, c.out)
		switch {
		case errors.Is(err, unix.EAGAIN):
			l.watch(i, unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLOUT)
			return
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			l.fail(i, os.NewSyscallError("write", err))
			return
		}
		c.out = c.out[n:]
	}
}

func (l *loop) watch(i int, events uint32) {
	c := &l.conns[i]
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: int32(i)}); err != nil {
		l.fail(i, os.NewSyscallError("epoll_ctl", err))
	}
}

// poll handles what the sockets have to say, waiting up to timeout ns
// (at most maxSleep) for the first event.
func (l *loop) poll(timeout int64) {
	timeout = max(0, min(timeout, int64(maxSleep)))
	// Raw for the reason sleep is.
	var r uintptr
	var errno unix.Errno
	if l.pwait2 {
		l.ts = unix.NsecToTimespec(timeout)
		r, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(&l.ts)), 0, 0)
	} else {
		ms := (timeout + int64(time.Millisecond) - 1) / int64(time.Millisecond)
		r, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
	}
	n := int(r)
	if errno != 0 {
		n = 0 // EINTR: the next round polls again
	}
	for _, ev := range l.events[:n] {
		i := int(ev.Fd)
		c := &l.conns[i]
		switch {
		case c.state == connClosed:
			// Closed earlier in this round.
		case c.connecting:
			l.connected(i)
		default:
			if ev.Events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
				l.write(i)
				if len(c.out) == 0 && c.state == connBusy {
					l.watch(i, unix.EPOLLIN|unix.EPOLLRDHUP)
				}
			}
			if ev.Events&^unix.EPOLLOUT != 0 && c.state != connClosed {
				l.read(i)
			}
		}
		// An answer frees a connection: an arrival due goes at once, as
		// wrk sends as soon as it reads, not after the whole batch; a
		// closed-model user's next arrival is due when its answer came.
		// Once stopped, nothing more is sent: drain polls here too.
		if _, due := l.a.next(); due && c.state != connBusy && !l.stop.Load() {
			l.sendDue(l.clock(), false)
		}
	}
}

// expire ends the requests past their timeout. It looks at the connections
// only once the earliest one may have expired, not at every wake.
func (l *loop) expire() {
	now := l.e.now()
	if l.busy == 0 || now < l.expiry {
		return
	}
	timeout := int64(l.e.cfg.Timeout)
	l.expiry = now + timeout
	for i := range l.conns {
		c := &l.conns[i]
		if c.state != connBusy {
			continue
		}
		if now-c.sent >= timeout {
			l.fail(i, os.ErrDeadlineExceeded)
		} else {
			l.expiry = min(l.expiry, c.sent+timeout)
		}
	}
}

func (l *loop) connected(i int) {
	c := &l.conns[i]
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err != nil {
		l.fail(i, os.NewSyscallError("connect", err))
		return
	}
	c.connecting = false
	l.dials--
	l.watch(i, unix.EPOLLIN|unix.EPOLLRDHUP)
	if c.state == connBusy {
		l.transmit(i)
	}
}

// read takes what has arrived, then tries to parse a whole response.
func (l *loop) read(i int) {
	c := &l.conns[i]
	n, err := l.receive(i)
	switch {
	case errors.Is(err, io.EOF):
		c.eof = true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
	case err != nil:
		l.fail(i, os.NewSyscallError("read", err))
		return
	}
	if c.state != connBusy {
		// Bytes or a close on an idle connection: nothing is owed on it.
		if n > 0 || c.eof {
			l.shut(i)
		}
		return
	}
	if len(c.in) == 0 {
		if c.eof {
			l.fail(i, io.EOF)
		}
		return
	}
	if n > 0 || c.eof {
		l.parse(i)
	}
}

// receive appends to the connection's input what has arrived: one read
// over plain http, which saves the call that would only say "no more"
// (epoll is level-triggered, so whatever is left is reported again), and
// over https until the socket is dry, since crypto/tls holds back what it
// read ahead, where epoll cannot see it.
func (l *loop) receive(i int) (int, error) {
	c := &l.conns[i]
	total := 0
	for {
		if cap(c.in)-len(c.in) < readChunk {
			c.in = append(c.in[:cap(c.in)], make([]byte, readChunk)...)[:len(c.in)]
		}
		var n int
		var err error
		if c.tls != nil {
			n, err = c.tls.Read(c.in[len(c.in):cap(c.in)])
		} else {
			n, err = l.recv(c, c.in[len(c.in):cap(c.in)])
		}
		c.in = c.in[:len(c.in)+n]
		total += n
		if err != nil || c.tls == nil {
			return total, err
		}
	}
}

// recv is one read from the socket, noting the kernel's arrival stamp.
func (l *loop) recv(c *conn, p []byte) (int, error) {
	l.iov.Base = &p[0]
	l.iov.SetLen(len(p))
	l.msg.Iov = &l.iov
	l.msg.Iovlen = 1
	l.msg.Control = &l.oob[0]
	l.msg.SetControllen(len(l.oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&l.msg)), unix.MSG_DONTWAIT)
	switch {
	case errno != 0:
		return 0, errno
	case r == 0:
		return 0, io.EOF
	}
	if at := arrival(l.oob[:l.msg.Controllen]); at > 0 {
		c.rx = at
	}
	return int(r), nil
}

// parse completes the request if its whole response has arrived.
func (l *loop) parse(i int) {
	c := &l.conns[i]
	resp := l.rec.resp
	resp.SkipBody = l.e.targets[c.target].head
	l.src = feed{b: c.in, eof: c.eof}
	l.br.Reset(&l.src)
	err := resp.Read(l.br)
	if err != nil && l.src.starved && !c.eof {
		return // the rest is on its way
	}
	now := l.e.now()
	done := now
	if c.rx > 0 {
		// The kernel's stamp of the last bytes, within what is possible.
		done = min(max(c.rx-l.wall, c.sent), now)
	} else {
		l.e.unstamped.Add(1)
	}
	l.end(i, done, err)
	extra := len(l.src.b) + l.br.Buffered()
	if err != nil || c.eof || extra > 0 || resp.ConnectionClose() {
		l.shut(i)
		return
	}
	c.state = connIdle
	l.idle = append(l.idle, i)
}

// end records the connection's request, done at done (unix ns).
func (l *loop) end(i int, done int64, err error) {
	c := &l.conns[i]
	done = l.rec.store(c.t, c.target, c.sent, done, err)
	l.busy--
	c.state = connIdle
	l.a.answered(c.t, done-l.e.baseUnix)
}

// fail ends the connection's request, if any, with err and closes it.
func (l *loop) fail(i int, err error) {
	if l.conns[i].state == connBusy {
		l.end(i, l.e.now(), err)
	}
	l.shut(i)
}

// shut closes the connection; the next request on it reconnects.
func (l *loop) shut(i int) {
	c := &l.conns[i]
	if c.state == connClosed {
		return
	}
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	if c.connecting {
		c.connecting = false
		l.dials--
	}
	c.state, c.tls, c.out = connClosed, nil, nil
	l.closed = append(l.closed, i)
}

// arrival reads the kernel's receive stamp from a control message, as unix
// ns; 0 if there is none.
func arrival(oob []byte) int64 {
	for len(oob) > 0 {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && len(data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(data))
			nsec := int64(binary.NativeEndian.Uint64(data[8:]))
			return sec*int64(time.Second) + nsec
		}
		oob = rest
	}
	return 0
}

// feed serves a connection's bytes to fasthttp's parser and notes whether
// the parser wanted more than has arrived, which is how an incomplete
// response is told from a malformed one.
type feed struct {
	b       []byte
	eof     bool
	starved bool
}

var errIncomplete = errors.New("response incomplete")

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		f.starved = true
		return 0, errIncomplete
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// handshake opens TLS on connection i. crypto/tls keeps a handshake's
// errors, so the handshake cannot be resumed on readiness as reads are: it
// holds the loop, up to the request's timeout, once per connection, and
// its first request's latency counts it.
func (l *loop) handshake(i int) error {
	c := &l.conns[i]
	w := &tlsWire{l: l, i: i, block: true}
	c.tls = tls.Client(w, l.e.tls)
	err := c.tls.Handshake()
	w.block = false
	if err != nil {
		c.tls = nil
	}
	return err
}

// tlsWire is the socket under an https connection as crypto/tls sees it.
// A read notes the kernel's arrival stamp as a plain read does, and after
// the handshake one that would block returns EAGAIN, which crypto/tls
// treats as temporary: the loop reads again on the next readiness. Writes
// block, up to the request's timeout, until the kernel takes them: the
// ciphertext is crypto/tls's buffer, and an https request larger than the
// socket's buffer holds the loop.
type tlsWire struct {
	l     *loop
	i     int
	block bool // reads block too: the handshake
}

func (w *tlsWire) Read(p []byte) (int, error) {
	for {
		n, err := w.l.recv(&w.l.conns[w.i], p)
		if err != unix.EAGAIN || !w.block {
			return n, err
		}
		if err := w.await(unix.POLLIN); err != nil {
			return 0, err
		}
	}
}

func (w *tlsWire) Write(p []byte) (int, error) {
	for n := 0; n < len(p); {
		k, err := unix.Write(w.l.conns[w.i].fd, p[n:])
		switch {
		case err == unix.EAGAIN:
			if err := w.await(unix.POLLOUT); err != nil {
				return n, err
			}
		case err == unix.EINTR:
		case err != nil:
			return n, os.NewSyscallError("write", err)
		default:
			n += k
		}
	}
	return len(p), nil
}

// await blocks until the socket is ready for events or the request's
// deadline.
func (w *tlsWire) await(events int16) error {
	c := &w.l.conns[w.i]
	left := c.sent + int64(w.l.e.cfg.Timeout) - w.l.e.now()
	if left <= 0 {
		return os.ErrDeadlineExceeded
	}
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: events}}
	if _, err := unix.Poll(fds, int(max(1, left/int64(time.Millisecond)))); err != nil && err != unix.EINTR {
		return os.NewSyscallError("poll", err)
	}
	return nil
}

// The rest of net.Conn: the loop owns the socket and its deadlines.
func (w *tlsWire) Close() error                     { return nil }
func (w *tlsWire) LocalAddr() net.Addr              { return (*net.TCPAddr)(nil) }
func (w *tlsWire) RemoteAddr() net.Addr             { return (*net.TCPAddr)(nil) }
func (w *tlsWire) SetDeadline(time.Time) error      { return nil }
func (w *tlsWire) SetReadDeadline(time.Time) error  { return nil }
func (w *tlsWire) SetWriteDeadline(time.Time) error { return nil }
