// Package rpctest runs the function RPC server inside a test process, with a
// Stop that behaves like a killed server (every connection is cut) and a
// Restart on the same address, so clients can be tested going through an
// outage.
package rpctest

import (
	"fmt"
	"net"
	"net/rpc"
	"sync"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/loopback"
)

// Server is an in-process RPC server serving function.Service.
type Server struct {
	// Addr is the address the server listens on; it stays the same across
	// Restart.
	Addr string

	rpc   *rpc.Server
	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	done  chan struct{} // closed when the accept loop has ended
}

// Start serves svc on addr (use "127.0.0.1:0" for a free port).
func Start(addr string, svc *function.Service) (*Server, error) {
	srv := rpc.NewServer()
	if err := srv.RegisterName(function.ServiceName, svc); err != nil {
		return nil, fmt.Errorf("register %s: %w", function.ServiceName, err)
	}
	s := &Server{rpc: srv, conns: make(map[net.Conn]struct{})}
	if err := s.listen(addr); err != nil {
		return nil, err
	}
	return s, nil
}

// Restart serves again on the address of the stopped server.
func (s *Server) Restart() error {
	return s.listen(s.Addr)
}

// Stop closes the listener and every open connection, as if the server
// process had died. It is safe to call on a stopped server.
func (s *Server) Stop() {
	s.mu.Lock()
	ln, done := s.ln, s.done
	s.ln = nil
	s.mu.Unlock()
	if ln == nil {
		return
	}
	// Stop accepting first, so no connection slips in after the cut.
	ln.Close()
	<-done
	s.mu.Lock()
	for conn := range s.conns {
		conn.Close()
	}
	s.mu.Unlock()
}

func (s *Server) listen(addr string) error {
	ln, err := loopback.Listen(addr)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.Addr, s.ln, s.done = ln.Addr().String(), ln, make(chan struct{})
	s.mu.Unlock()
	go s.accept(ln, s.done)
	return nil
}

func (s *Server) accept(ln net.Listener, done chan struct{}) {
	defer close(done)
	for {
		conn, err := ln.Accept()
		if err != nil {
			return // the listener was closed by Stop
		}
		s.mu.Lock()
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		go func() {
			s.rpc.ServeConn(conn)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
		}()
	}
}
