package main

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io"
	"net"
	"net/rpc"
	"testing"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
)

const testReadTimeout = 300 * time.Millisecond

func startServer(t *testing.T) string {
	t.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName(function.ServiceName, function.NewService("", 0)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serve(ln, srv, testReadTimeout)
	return ln.Addr().String()
}

func callEmpty(t *testing.T, c *rpc.Client) {
	t.Helper()
	var reply function.Reply
	if err := c.Call(function.MethodEmpty, function.Args{}, &reply); err != nil {
		t.Fatalf("call: %v", err)
	}
}

// A call cut off in the middle ends its connection after the read timeout,
// and the server goes on serving.
func TestTruncatedCallIsCutOff(t *testing.T) {
	addr := startServer(t)
	var call bytes.Buffer
	enc := gob.NewEncoder(&call)
	if err := enc.Encode(rpc.Request{ServiceMethod: function.MethodEmpty, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(function.Args{N: 7}); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := conn.Write(call.Bytes()[:call.Len()/2]); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	took := time.Since(start)
	var netErr net.Error
	if !errors.Is(err, io.EOF) && !(errors.As(err, &netErr) && !netErr.Timeout()) {
		t.Fatalf("read after a truncated call: %v after %v, want the connection closed", err, took)
	}
	if took < testReadTimeout*9/10 || took > testReadTimeout+time.Second {
		t.Errorf("truncated call cut off after %v, want about %v", took, testReadTimeout)
	}

	c, err := rpc.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callEmpty(t, c)
}

// A connection idle between calls, like a gateway's pooled one, is kept
// however long it idles.
func TestIdleConnectionIsKept(t *testing.T) {
	c, err := rpc.Dial("tcp", startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callEmpty(t, c)
	time.Sleep(3 * testReadTimeout)
	callEmpty(t, c)
	// Concurrent calls pipeline on the connection, so a call may already be
	// buffered when the previous one is read: it must be served too.
	done := make(chan *rpc.Call, 50)
	for range cap(done) {
		c.Go(function.MethodEmpty, function.Args{}, new(function.Reply), done)
	}
	for range cap(done) {
		if call := <-done; call.Error != nil {
			t.Fatalf("pipelined call: %v", call.Error)
		}
	}
}
