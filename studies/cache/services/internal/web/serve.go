// Package web holds what the cache study's two programs share: running
// until a signal, the loopback-only listen address, and JSON answers.
package web

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const (
	// shutdownGrace bounds how long in-flight requests may finish on
	// SIGTERM: the lab's harness kills a process 2 s after asking it to stop.
	shutdownGrace = 1500 * time.Millisecond
	// maxHeaderBytes bounds a request's line and headers (431 beyond); the
	// study's requests carry a few hundred bytes.
	maxHeaderBytes = 8 << 10
	// MaxBodyBytes bounds a request body (413 beyond): a mutation takes a
	// JSON object of a few dozen bytes.
	MaxBodyBytes = 1 << 20
)

// Main runs a program: run gets a context that SIGINT or SIGTERM cancels,
// and an error it returns ends the process with status 1.
func Main(run func(ctx context.Context) error) {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// Serve answers on addr with h until ctx is done, then shuts down: requests
// in flight get shutdownGrace, then their connections are closed.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	srv, err := newServer(addr, h, os.Getenv)
	if err != nil {
		return err
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe() }()
	log.Printf("listening on %s", addr)

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Closing the connections cancels the requests' contexts, so
		// their database and Redis calls end too.
		log.Printf("shutdown: requests still in flight after %v are cut off: %v", shutdownGrace, err)
		srv.Close()
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return nil
}

// newServer is the server both programs run, with limits on what a client
// may hold: the timeouts (Go durations) can be set by env
// READ_HEADER_TIMEOUT (request line and headers, default 5s), READ_TIMEOUT
// (the whole request, default 10s) and IDLE_TIMEOUT (between requests on a
// kept-alive connection, default 120s: longer than the gateway's 90 s for
// its idle upstream connections, so the gateway, not the instance, closes
// them and never sends on a connection being closed).
func newServer(addr string, h http.Handler, getenv func(string) string) (*http.Server, error) {
	srv := &http.Server{
		Addr:              addr,
		Handler:           limitBody(h),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{
		{"READ_HEADER_TIMEOUT", &srv.ReadHeaderTimeout},
		{"READ_TIMEOUT", &srv.ReadTimeout},
		{"IDLE_TIMEOUT", &srv.IdleTimeout},
	} {
		if v := getenv(d.env); v != "" {
			dur, err := time.ParseDuration(v)
			if err != nil || dur <= 0 {
				return nil, fmt.Errorf("%s=%q: want a positive duration such as 5s", d.env, v)
			}
			*d.dst = dur
		}
	}
	return srv, nil
}

// limitBody answers 413 to a body declared over MaxBodyBytes without
// reading it, and makes reading past MaxBodyBytes fail with an
// *http.MaxBytesError. A request without a body passes untouched.
func limitBody(h http.Handler) http.Handler {
	limited := http.MaxBytesHandler(h, MaxBodyBytes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ContentLength == 0:
			h.ServeHTTP(w, r)
		case r.ContentLength > MaxBodyBytes:
			// The unread body cannot be told from a next request.
			w.Header().Set("Connection", "close")
			Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxBodyBytes))
		default:
			limited.ServeHTTP(w, r)
		}
	})
}

// ListenAddr reads the listen address from env ADDR. The study's services
// are reached only from this machine, so anything but a loopback address is
// refused rather than exposing them; in a pod of msbench's cluster backend,
// the pod's own address (env PodIPEnv, the downward API's status.podIP) is
// accepted too, which only the cluster reaches.
func ListenAddr() (string, error) {
	addr := os.Getenv("ADDR")
	if addr == "" {
		return "", errors.New("ADDR is not set (want 127.0.0.1:PORT)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("ADDR=%q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || ip != nil && ip.IsLoopback() || ip != nil && isPodIP(ip, os.Getenv(PodIPEnv)) {
		return addr, nil
	}
	return "", fmt.Errorf("ADDR=%q: want a loopback address such as 127.0.0.1:PORT (or the pod's own, %s)", addr, PodIPEnv)
}

// PodIPEnv names the variable msbench's cluster backend sets to the pod's
// own address.
const PodIPEnv = "MSBENCH_POD_IP"

// isPodIP says whether ip is the pod's address the variable gives; an
// unspecified one there would open every interface, so only a unicast one
// counts.
func isPodIP(ip net.IP, pod string) bool {
	p := net.ParseIP(pod)
	return p != nil && p.IsGlobalUnicast() && p.Equal(ip)
}
