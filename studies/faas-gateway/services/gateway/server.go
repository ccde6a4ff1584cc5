package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Limits bound what a client may hold: a connection that sends its request
// slowly or not at all, or stays idle, is closed after these.
type Limits struct {
	ReadHeaderTimeout time.Duration // request line and headers
	ReadTimeout       time.Duration // the whole request, body included
	// WriteTimeout bounds the answer. On net/http it runs from the end of
	// the headers, so it must exceed the slowest call (RPC_TIMEOUT).
	WriteTimeout time.Duration
	IdleTimeout  time.Duration // between requests on a kept-alive connection
}

// DefaultLimits are the production limits. The load generator sends a
// request at once, so a few seconds is plenty; IdleTimeout is long, because
// a closed-model user thinking between requests must not find its
// connection gone.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       120 * time.Second,
}

const (
	// MaxHeaderBytes bounds the request line and headers (431 beyond). The
	// study's requests carry a few hundred bytes.
	MaxHeaderBytes = 8 << 10
	// MaxBodyBytes bounds a request body (413 beyond). Every endpoint is a
	// GET with query parameters and takes no body.
	MaxBodyBytes = 64 << 10
	// ShutdownGrace is how long in-flight requests may finish after SIGTERM;
	// the lab's harness kills a process 2 s after asking it to stop.
	ShutdownGrace = 1500 * time.Millisecond
)

// Server is a framework's server as Main drives it.
type Server struct {
	// Serve serves on ln until serving fails or Shutdown is called.
	Serve func(ln net.Listener) error
	// Shutdown stops accepting, closes idle connections and waits for
	// in-flight requests until ctx is done.
	Shutdown func(ctx context.Context) error
}

// HTTPServer serves h on a net/http server with the limits. net/http, Gin,
// Echo and Iris all document this for custom server settings: their router
// is the Handler of an http.Server.
func HTTPServer(h http.Handler, l Limits) Server {
	srv := &http.Server{
		Handler:           readBody(h, MaxBodyBytes),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	return Server{Serve: srv.Serve, Shutdown: srv.Shutdown}
}

// readBody reads a request's body, if it has one, before h sees the
// request. No endpoint reads a body, and net/http only notices a body's
// faults when someone reads it: otherwise a body too large, malformed or cut
// short would be answered 200 (the last only after the read timeout) and
// its connection closed after. A request without a body, the study's case,
// costs one comparison.
func readBody(h http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			if err := drain(w, r, limit); err != nil {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// drain reads r's body to its end, or answers why it could not.
func drain(w http.ResponseWriter, r *http.Request, limit int64) error {
	var err error
	if r.ContentLength > limit {
		// Known from the header: no need to read what will be refused.
		err = &http.MaxBytesError{Limit: limit}
	} else {
		_, err = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, limit))
	}
	if err == nil {
		return nil
	}
	status := http.StatusBadRequest
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		status, err = http.StatusRequestEntityTooLarge, fmt.Errorf("over %d bytes", tooBig.Limit)
	case errors.As(err, &netErr) && netErr.Timeout():
		status, err = http.StatusRequestTimeout, errors.New("not received in time")
	}
	w.Header().Set("Content-Type", textPlain)
	// The rest of the body cannot be told from a next request. Saying so
	// also keeps net/http from reading it before answering.
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	fmt.Fprintf(w, "request body: %v\n", err)
	return err
}
