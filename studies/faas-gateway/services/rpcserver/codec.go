package main

import (
	"bufio"
	"encoding/gob"
	"log"
	"net"
	"net/rpc"
	"sync"
	"time"
)

// callCodec is net/rpc's gob codec (rpc.ServeConn's) plus a read deadline
// that starts with a call's first byte. A client that sends part of a call
// and stops is cut off after timeout; a connection idle between calls, as
// the gateways' pooled ones are for as long as no request comes, is kept.
// (Idle connections cost the same as a stalled call, so bounding only
// stalled calls protects against a broken client, not a hostile one; the
// server listens on loopback only.)
type callCodec struct {
	conn    net.Conn
	r       *bufio.Reader // gob reads through it, so what it holds tells whether a call has begun
	dec     *gob.Decoder
	w       *bufio.Writer
	enc     *gob.Encoder
	timeout time.Duration
	once    sync.Once
}

func newCallCodec(conn net.Conn, timeout time.Duration) *callCodec {
	r, w := bufio.NewReader(conn), bufio.NewWriter(conn)
	return &callCodec{conn: conn, r: r, dec: gob.NewDecoder(r), w: w, enc: gob.NewEncoder(w), timeout: timeout}
}

func (c *callCodec) ReadRequestHeader(req *rpc.Request) error {
	if c.r.Buffered() == 0 {
		if err := c.conn.SetReadDeadline(time.Time{}); err != nil {
			return err
		}
		if _, err := c.r.Peek(1); err != nil {
			return err // io.EOF: the client hung up between calls
		}
	}
	// The deadline covers the header and ReadRequestBody after it.
	if err := c.conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	return c.dec.Decode(req)
}

func (c *callCodec) ReadRequestBody(body any) error {
	return c.dec.Decode(body)
}

// WriteResponse is net/rpc's own: net/rpc serialises the calls.
func (c *callCodec) WriteResponse(resp *rpc.Response, body any) error {
	if err := c.enc.Encode(resp); err != nil {
		if c.w.Flush() == nil {
			log.Println("rpc: gob error encoding response:", err)
			c.Close()
		}
		return err
	}
	if err := c.enc.Encode(body); err != nil {
		if c.w.Flush() == nil {
			log.Println("rpc: gob error encoding body:", err)
			c.Close()
		}
		return err
	}
	return c.w.Flush()
}

func (c *callCodec) Close() error {
	var err error
	c.once.Do(func() { err = c.conn.Close() })
	return err
}
