package platform

import (
	"fmt"
	"net"
	"sync"
	"time"

	"go-micro.dev/v5/transport"
)

// MaxRequest is the largest request, header and body together, a service
// reads: room for the largest the gateway sends, a country of up to its
// 16 KiB of header (20 KiB with net/http's slack) as JSON, where an escape
// such as %ff becomes the six bytes \ufffd.
const MaxRequest = 64 << 10

// Transport is go-micro's HTTP transport with its server's reads bounded:
// a request, header and body, must arrive within readTimeout of its first
// byte and hold at most maxRequest bytes. go-micro builds the transport's
// http.Server itself, with a 5 s header deadline and nothing more: a body
// shorter than it declares held the connection for ever and any body was
// read whole, and the requests after the first on a connection, which it
// reads itself once it has hijacked it, had no bound at all. The bound is
// set on the connections its server reads, which it takes from a listener
// given to it (transport.NetListener), so go-micro still serves them as it
// does; what it answers a request cut short is its own (500 for a body).
func Transport(readTimeout time.Duration, maxRequest int64) transport.Transport {
	return &boundedTransport{Transport: transport.NewHTTPTransport(), limits: limits{readTimeout, maxRequest}}
}

type limits struct {
	readTimeout time.Duration
	maxRequest  int64
}

type boundedTransport struct {
	transport.Transport
	limits limits
}

func (t *boundedTransport) Listen(addr string, opts ...transport.ListenOption) (transport.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return t.Transport.Listen(addr, append(opts, transport.NetListener(&boundedListener{l, t.limits}))...)
}

type boundedListener struct {
	net.Listener
	limits limits
}

func (l *boundedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &boundedConn{Conn: c, limits: l.limits}, nil
}

// boundedConn tells requests apart without parsing them: a request starts
// with the first byte read after an answer was written (or the connection
// opened) and ends when its answer is written. A client that wants its
// answer must therefore send its request whole, within the limits.
type boundedConn struct {
	net.Conn
	limits

	mu sync.Mutex
	// set is the read deadline the server set itself (zero: none).
	set time.Time
	// end is the current request's deadline, zero between requests.
	end time.Time
	// read is how much of the current request has been read.
	read int64
}

func (c *boundedConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	rest := c.maxRequest - c.read
	c.mu.Unlock()
	if rest < 0 {
		return 0, fmt.Errorf("request over %d bytes", c.maxRequest)
	}
	// One byte over the limit tells a request over it from one at it.
	if int64(len(p)) > rest+1 {
		p = p[:rest+1]
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.read += int64(n)
		if c.end.IsZero() {
			c.end = time.Now().Add(c.readTimeout)
			if derr := c.applyLocked(); derr != nil && err == nil {
				err = derr
			}
		}
		c.mu.Unlock()
	}
	return n, err
}

// Write answers the current request: the next byte read starts another.
func (c *boundedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.end, c.read = time.Time{}, 0
	err := c.applyLocked()
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *boundedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = t
	return c.applyLocked()
}

func (c *boundedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

// CloseWrite lets net/http end its side of a connection it refused before
// closing it, so that the client reads the answer rather than a reset.
func (c *boundedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// applyLocked sets the earlier of the server's deadline and the request's.
func (c *boundedConn) applyLocked() error {
	d := c.set
	if d.IsZero() || (!c.end.IsZero() && c.end.Before(d)) {
		d = c.end
	}
	return c.Conn.SetReadDeadline(d)
}
