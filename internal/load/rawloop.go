package load

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawLoop is the open model over plain HTTP. Waking an idle process costs
// tens of microseconds of CPU on a virtual machine (25-30 µs on the
// machines msbench was built on), more than a busy generator spends on a
// whole request, so the loop is built to wake as little as the pacing
// allows:
//
//   - It owns every connection as a raw non-blocking socket outside Go's
//     netpoller, so an arriving response does not wake it.
//   - The kernel stamps each response's arrival (SO_TIMESTAMPNS), so
//     reading it at the next wake does not change the latency measured.
//   - Precise pacing (tick 0) wakes at each arrival's slot. Coarse pacing
//     wakes on a grid of ticks and sends every arrival due: a request
//     leaves up to a tick late, which is real lag, counted in the corrected
//     latency and in schedule lag.
//   - When every connection is busy and arrivals wait, it waits on the
//     sockets instead, so no pacing caps the throughput.
type rawLoop struct {
	e      *Engine
	w      *worker // the record batch, response and Server-Timing buffers
	tick   int64
	ep     int
	conns  []rawConn
	idle   []int // connections ready for a request, most recent last
	closed []int // connections never opened or closed since
	busy   int
	expiry int64 // unix ns when the first request in flight may time out
	dials  int   // connections waiting for the handshake
	mono   int64 // CLOCK_MONOTONIC at base, for sleep
	events []unix.EpollEvent
	oob    []byte
	msg    unix.Msghdr // reused by every read: unix.Recvmsg allocates
	iov    unix.Iovec
	src    feed
	br     *bufio.Reader
	wall   int64 // CLOCK_REALTIME minus e.now(), to place kernel timestamps
}

type connState uint8

const (
	connClosed connState = iota
	connIdle
	connBusy
)

// rawConn is one keep-alive connection and the request it carries.
type rawConn struct {
	fd         int
	state      connState
	connecting bool
	t          ticket
	target     uint16
	sent       int64  // unix ns
	out        []byte // request bytes not yet written
	in         []byte // response bytes so far
	rx         int64  // kernel arrival time of the last bytes read, unix ns
	eof        bool
}

// readChunk is the least free space a read offers the kernel.
const readChunk = 16 << 10

// rawSockaddr is the socket address the raw loop dials: the one
// resolveTarget checked, so both pacings reach the same server.
func rawSockaddr(ap netip.AddrPort) (unix.Sockaddr, int) {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, unix.AF_INET
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}, unix.AF_INET6
}

// newRawLoop needs e.base set.
func (e *Engine) newRawLoop() (*rawLoop, error) {
	mono, err := monoAt(e.base)
	if err != nil {
		return nil, err
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	n := e.cfg.Connections
	l := &rawLoop{
		e:      e,
		w:      e.newWorker(0),
		tick:   int64(e.cfg.Tick),
		ep:     ep,
		mono:   mono,
		conns:  make([]rawConn, n),
		idle:   make([]int, 0, n),
		closed: make([]int, 0, n),
		events: make([]unix.EpollEvent, min(n, 256)),
		oob:    make([]byte, unix.CmsgSpace(16)),
	}
	l.br = bufio.NewReaderSize(&l.src, readChunk)
	for i := n - 1; i >= 0; i-- {
		l.conns[i].fd = -1
		l.closed = append(l.closed, i)
	}
	return l, nil
}

// runRaw is the open model over plain HTTP; see rawLoop.
func (e *Engine) runRaw(ctx context.Context, l *rawLoop) (unsent int64, window time.Duration) {
	defer l.close()
	// Whichever way the schedule ends, what is in flight is waited for.
	defer l.drain()
	hard, cancel := e.sendWindow(ctx)
	defer cancel()
	p := e.cfg.Pacer
	next, more := p.Next()
	for {
		now := l.clock()
		// Sends first, answers after: what arrived since the last wake is
		// timed already, and reading it first would delay the sends.
		waiting := false
		for ; more && int64(next) <= now; next, more = p.Next() {
			if e.cfg.MaxRequests > 0 && e.seq.Load() >= e.cfg.MaxRequests {
				more = false
				break
			}
			i, ok := l.free()
			if !ok {
				// The answers that came in may have freed one.
				l.poll(0)
				if i, ok = l.free(); !ok {
					// The arrival waits with its intended time, and the
					// schedule behind it is not read yet.
					waiting = true
					break
				}
				if hard.Err() != nil {
					// An overdue schedule against a fast server could
					// go round here for ever; checked once per pass over
					// the connections, off the common path.
					break
				}
			}
			l.send(i, ticket{seq: uint64(e.seq.Add(1) - 1), intended: e.baseUnix + int64(next)})
		}
		if !waiting {
			l.poll(0)
		}
		l.expire()
		if !more {
			return 0, time.Since(e.base)
		}
		if hard.Err() != nil {
			return e.unsent(), time.Since(e.base)
		}
		// Let the collector, timers and signal handling run: see sleep.
		runtime.Gosched()
		if waiting || l.dials > 0 {
			// Every connection is busy, or one is being opened: the
			// first answer or handshake is worth waking for.
			l.poll(l.tickMs())
			continue
		}
		wake := min(int64(next), now+int64(maxSleep))
		if l.tick > 0 {
			wake = ceilTo(wake, l.tick)
			if l.busy > 0 {
				// Collect on the grid too, freeing connections; precise
				// pacing collects at the next arrival.
				wake = min(wake, now/l.tick*l.tick+l.tick)
			}
		}
		l.sleep(wake)
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
func (l *rawLoop) sleep(offset int64) {
	// Loop until Go's clock agrees: a request sent early would make its
	// latency look shorter than it was.
	for l.clock() < offset {
		ts := unix.NsecToTimespec(l.mono + offset)
		_, _, errno := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if errno == unix.EINTR {
			return
		}
	}
}

// tickMs is the tick as an epoll timeout, which counts milliseconds.
func (l *rawLoop) tickMs() int {
	return int(max(1, (l.tick+int64(time.Millisecond)-1)/int64(time.Millisecond)))
}

// clock returns ns since base and refreshes the offset that places the
// kernel's wall-clock arrival stamps on the engine's monotonic timeline;
// refreshing each wake keeps NTP slewing out of the latencies.
func (l *rawLoop) clock() int64 {
	t := time.Now()
	since := int64(t.Sub(l.e.base))
	l.wall = t.UnixNano() - (l.e.baseUnix + since)
	return since
}

// drain waits for the requests still in flight, as precise pacing waits
// for its senders; the timeout bounds each.
func (l *rawLoop) drain() {
	for l.busy > 0 {
		l.clock()
		l.poll(l.tickMs())
		l.expire()
		runtime.Gosched()
	}
}

func (l *rawLoop) close() {
	for i := range l.conns {
		if l.conns[i].fd >= 0 {
			unix.Close(l.conns[i].fd)
		}
	}
	unix.Close(l.ep)
	l.w.flush()
	l.w.release()
}

// free pops a connection for the next request: an open idle one if any,
// else one to open.
func (l *rawLoop) free() (int, bool) {
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

func (l *rawLoop) send(i int, t ticket) {
	c := &l.conns[i]
	c.t, c.target = t, l.e.mix.pick(t.seq)
	c.out = l.e.targets[c.target].wire
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
	l.write(i)
}

func (l *rawLoop) dial(i int) error {
	c := &l.conns[i]
	fd, err := unix.Socket(l.e.rawFamily, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	c.fd = fd
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return os.NewSyscallError("setsockopt SO_TIMESTAMPNS", err)
	}
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	switch err := unix.Connect(fd, l.e.rawAddr); {
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

// write sends what the kernel takes; the rest goes when the socket is
// writable again.
func (l *rawLoop) write(i int) {
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

func (l *rawLoop) watch(i int, events uint32) {
	c := &l.conns[i]
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: int32(i)}); err != nil {
		l.fail(i, os.NewSyscallError("epoll_ctl", err))
	}
}

// poll handles what the sockets have to say, waiting up to ms for the
// first event.
func (l *rawLoop) poll(ms int) {
	// Raw for the reason sleep is.
	r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
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
	}
}

// expire ends the requests past their timeout. It looks at the connections
// only once the earliest one may have expired, not at every wake.
func (l *rawLoop) expire() {
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

func (l *rawLoop) connected(i int) {
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
		l.write(i)
	}
}

// read takes one read's worth, then tries to parse a whole response. One
// read per readiness saves the call that would only say "no more": epoll
// is level-triggered, so whatever is left is reported again.
func (l *rawLoop) read(i int) {
	c := &l.conns[i]
	if cap(c.in)-len(c.in) < readChunk {
		c.in = append(c.in[:cap(c.in)], make([]byte, readChunk)...)[:len(c.in)]
	}
	n, oobn, err := l.recvmsg(c.fd, c.in[len(c.in):cap(c.in)])
	switch {
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		return
	case err != nil:
		l.fail(i, os.NewSyscallError("read", err))
		return
	case n == 0:
		c.eof = true
	default:
		c.in = c.in[:len(c.in)+n]
		if at := arrival(l.oob[:oobn]); at > 0 {
			c.rx = at
		}
	}
	if c.state != connBusy {
		// Bytes or a close on an idle connection: nothing is owed on it.
		l.shut(i)
		return
	}
	if len(c.in) == 0 {
		if c.eof {
			l.fail(i, io.EOF)
		}
		return
	}
	l.parse(i)
}

func (l *rawLoop) recvmsg(fd int, p []byte) (n, oobn int, err error) {
	l.iov.Base = &p[0]
	l.iov.SetLen(len(p))
	l.msg.Iov = &l.iov
	l.msg.Iovlen = 1
	l.msg.Control = &l.oob[0]
	l.msg.SetControllen(len(l.oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&l.msg)), unix.MSG_DONTWAIT)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), int(l.msg.Controllen), nil
}

// parse completes the request if its whole response has arrived.
func (l *rawLoop) parse(i int) {
	c := &l.conns[i]
	resp := l.w.resp
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
	}
	l.w.store(uint32(i), c.t.seq, c.target, c.t.intended, c.sent, done, err)
	l.busy--
	extra := len(l.src.b) + l.br.Buffered()
	if err != nil || c.eof || extra > 0 || resp.ConnectionClose() {
		l.shut(i)
		return
	}
	c.state = connIdle
	l.idle = append(l.idle, i)
}

// fail ends the connection's request, if any, with err and closes it.
func (l *rawLoop) fail(i int, err error) {
	c := &l.conns[i]
	if c.state == connBusy {
		l.w.store(uint32(i), c.t.seq, c.target, c.t.intended, c.sent, l.e.now(), err)
		l.busy--
	}
	l.shut(i)
}

// shut closes the connection; the next request on it reconnects.
func (l *rawLoop) shut(i int) {
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
	c.state = connClosed
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
