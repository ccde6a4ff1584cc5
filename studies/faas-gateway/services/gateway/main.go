package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/msbench/msbench/studies/faas-gateway/services/loopback"
)

// Main is the start-up every gateway binary shares: configuration from the
// environment, the gateway, a loopback listener, the start-up log line, and
// on SIGTERM or SIGINT a shutdown that gives in-flight requests
// ShutdownGrace. newServer builds the framework's server with the limits.
func Main(framework string, newServer func(g *Gateway, l Limits) Server) {
	log.SetPrefix("gateway-" + framework + ": ")
	if err := run(newServer); err != nil {
		log.Fatal(err)
	}
}

func run(newServer func(g *Gateway, l Limits) Server) error {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	g, err := New(cfg)
	if err != nil {
		return err
	}
	defer g.Close()
	ln, err := loopback.Listen(cfg.Addr)
	if err != nil {
		return err
	}
	srv := newServer(g, cfg.Limits)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// Tests and the harness read the bound address from this line, which
	// matters when ADDR asks for port 0.
	log.Printf("listening on %s (rpc %s, policy %s)", ln.Addr(), cfg.RPC.Addr, cfg.RPC.Policy)

	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), cmp.Or(err, errors.New("stopped serving")))
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Exiting cuts off what is left, which is the point of the grace.
		log.Printf("stopped with requests still in flight after %v: %v", ShutdownGrace, err)
		return nil
	}
	log.Print("stopped")
	return nil
}
