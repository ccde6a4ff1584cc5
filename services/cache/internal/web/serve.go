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

// shutdownGrace bounds how long in-flight requests may finish on SIGTERM.
const shutdownGrace = 10 * time.Second

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

// Serve answers on addr with h until ctx is done, then shuts down gracefully.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
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
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return nil
}

// ListenAddr reads the listen address from env ADDR. The study's services
// are reached only from this machine, so anything but a loopback address is
// refused rather than exposing them.
func ListenAddr() (string, error) {
	addr := os.Getenv("ADDR")
	if addr == "" {
		return "", errors.New("ADDR is not set (want 127.0.0.1:PORT)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("ADDR=%q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("ADDR=%q: want a loopback address such as 127.0.0.1:PORT", addr)
	}
	return addr, nil
}
