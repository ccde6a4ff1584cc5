package gateway

import (
	"fmt"
	"log"
	"net"
	"os"

	"github.com/msbench/msbench/services/faas-gateway/loopback"
)

// Main is the start-up every gateway binary shares: configuration from the
// environment, the gateway, a loopback listener and the start-up log line.
// serve runs the framework on ln and returns only when serving failed.
func Main(framework string, serve func(g *Gateway, ln net.Listener) error) {
	log.SetPrefix("gateway-" + framework + ": ")
	if err := run(serve); err != nil {
		log.Fatal(err)
	}
}

func run(serve func(g *Gateway, ln net.Listener) error) error {
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
	// Tests and the harness read the bound address from this line, which
	// matters when ADDR asks for port 0.
	log.Printf("listening on %s (rpc %s, policy %s)", ln.Addr(), cfg.RPC.Addr, cfg.RPC.Policy)
	if err := serve(g, ln); err != nil {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	return nil
}
