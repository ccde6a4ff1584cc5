package platform

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
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

// boundedConn tells requests apart by reading just enough of them: a
// request starts with the first byte read after the last one ended (or the
// connection opened) and ends with the last byte its header's
// Content-Length declares, or, with a chunked body, when its answer is
// written. Only its arrival is bounded: net/http reads on in the background
// while a handler runs, and a bound reaching into that read would cut the
// connection under a handler slower than the bound (a 2 MB parse per call
// under load), losing its answer.
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
	// head holds the current request's header until its blank line; body
	// is how much of its body is still to come once the header is read,
	// -1 for a chunked body, whose end only its answer tells.
	head   []byte
	inBody bool
	body   int64
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
		if derr := c.arrived(p[:n]); derr != nil && err == nil {
			err = derr
		}
		c.mu.Unlock()
	}
	return n, err
}

// arrived follows the requests through b, bytes just read, and sets the
// deadline of the one under way, if any.
func (c *boundedConn) arrived(b []byte) error {
	for len(b) > 0 {
		if c.end.IsZero() {
			c.end = time.Now().Add(c.readTimeout)
		}
		switch {
		case !c.inBody:
			// The header ends at its blank line; what follows is body.
			c.head = append(c.head, b...)
			i := bytes.Index(c.head, []byte("\r\n\r\n"))
			if i < 0 {
				c.read += int64(len(b))
				b = nil
				continue
			}
			taken := len(b) - (len(c.head) - (i + 4))
			c.read += int64(taken)
			b = b[taken:]
			c.inBody, c.body = true, bodyLength(c.head[:i])
			c.head = c.head[:0]
		case c.body < 0:
			// Chunked: bounded until the answer.
			c.read += int64(len(b))
			b = nil
			continue
		default:
			k := min(int64(len(b)), c.body)
			c.read += k
			c.body -= k
			b = b[k:]
		}
		if c.inBody && c.body == 0 {
			c.nextRequest()
		}
	}
	return c.applyLocked()
}

// bodyLength is what a request header declares of its body: its
// Content-Length, -1 for a chunked body, 0 for none. A malformed length is
// left to the server to refuse; its arrival stays bounded until the answer.
func bodyLength(head []byte) int64 {
	n := int64(0)
	for _, line := range bytes.Split(head, []byte("\r\n"))[1:] {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Transfer-Encoding")):
			return -1
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")):
			v, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || v < 0 {
				return -1
			}
			n = v
		}
	}
	return n
}

// nextRequest ends the current request's bounds.
func (c *boundedConn) nextRequest() {
	c.end, c.read, c.inBody, c.body = time.Time{}, 0, false, 0
	c.head = c.head[:0]
}

// Write answers the current request: the next byte read starts another.
func (c *boundedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.nextRequest()
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
