package apitest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/deps/depstest"
	"github.com/msbench/msbench/internal/proc"
)

// setupTimeout bounds the build and the dependencies' start, which take
// minutes the first time on a machine (npm ci fills npm's cache, FerretDB
// is compiled) and seconds after; testTimeout bounds the rest.
const (
	setupTimeout = 10 * time.Minute
	testTimeout  = 3 * time.Minute
)

// TestIPCStudy starts FerretDB, MariaDB and RabbitMQ once, the three
// styles' deployments side by side on them, and checks each style's API,
// bad input, hostile clients of every program (HTTP/1.1 of each HTTP
// server, pipelined floods, HTTP/2 of each gRPC service), hostile
// deadlines and one fault: the product service killed (rest, grpc) or the
// broker restarted (amqp). Then, one style at a time,
// deadlines under a hung store: the services' cap on a call's time, and
// that a flood of pages timing out leaves no backlog behind. Every program
// must then stop cleanly on SIGTERM.
func TestIPCStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB, MariaDB and RabbitMQ and 19 Node.js programs")
	}
	setup, cancelSetup := context.WithTimeout(context.Background(), setupTimeout)
	t.Cleanup(cancelSetup)
	ports := &proc.PortAllocator{}
	out := build(setup, t)
	mongo := depstest.Start(setup, t, deps.Mongo, "ipc-ferretdb", ports)
	maria := depstest.Start(setup, t, deps.MariaDB, "ipc-mariadb", ports)
	rabbit := depstest.Start(setup, t, deps.RabbitMQ, "ipc-rabbitmq", ports)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	st := openStores(ctx, t, mongo, maria)
	f := &fleet{}
	// Registered after the dependencies, so it runs before they stop.
	t.Cleanup(func() { f.stopAll(t) })
	ds := deploy(ctx, t, f, out, ports, mongo, maria, rabbit)

	t.Run("catalogue", func(t *testing.T) { checkCatalogue(ctx, t, st) })
	t.Run("styles", func(t *testing.T) {
		for _, style := range styles {
			d := ds[style]
			t.Run(style, func(t *testing.T) {
				t.Parallel()
				t.Run("pages", func(t *testing.T) { checkPages(ctx, t, d, st) })
				t.Run("not-found", func(t *testing.T) { checkNotFound(t, d) })
				t.Run("bad-input", func(t *testing.T) { checkBadInput(t, d) })
				t.Run("hostile-gateway", func(t *testing.T) { checkHostile(t, d.gateway, "/products/1") })
				t.Run("hostile-deadlines", func(t *testing.T) { checkHostileDeadlines(ctx, t, d, rabbit) })
				switch style {
				case "rest":
					t.Run("hostile-services", func(t *testing.T) { checkHostileAll(t, d) })
					t.Run("pipelined", func(t *testing.T) { checkPipelined(ctx, t, f, out, ports, d) })
					t.Run("service-hung", func(t *testing.T) { checkServiceHung(t, d.gateway, d.services["product"], callTimeout) })
					t.Run("service-killed", func(t *testing.T) { checkServiceKilled(ctx, t, f, d, st) })
				case "grpc":
					t.Run("malformed-messages", func(t *testing.T) { checkMalformedGRPC(ctx, t, d) })
					t.Run("exhaustion", func(t *testing.T) { checkGRPCExhaustion(ctx, t, d) })
					t.Run("connection-age", func(t *testing.T) { checkConnectionAge(ctx, t, f, out, ports, d, mongo) })
					t.Run("pipelined", func(t *testing.T) { checkPipelined(ctx, t, f, out, ports, d) })
					t.Run("service-hung", func(t *testing.T) { checkServiceHung(t, d.gateway, d.services["product"], callTimeout) })
					t.Run("service-killed", func(t *testing.T) { checkServiceKilled(ctx, t, f, d, st) })
				case "amqp":
					t.Run("hostile-health", func(t *testing.T) { checkHostileAll(t, d) })
					t.Run("malformed-messages", func(t *testing.T) { checkMalformedAMQP(ctx, t, d, rabbit) })
					t.Run("call-timeout", func(t *testing.T) { checkBrokerTimeout(ctx, t, f, out, ports, d, rabbit) })
					t.Run("broker-restart", func(t *testing.T) { checkBrokerRestart(ctx, t, d, rabbit, st) })
				}
			})
		}
	})
	// One at a time, with nothing else running: these hang the stores
	// that every style shares.
	t.Run("deadline-cap", func(t *testing.T) { checkDeadlineCap(ctx, t, ds, mongo, rabbit) })
	t.Run("backlog", func(t *testing.T) {
		for _, style := range styles {
			d := ds[style]
			t.Run(style, func(t *testing.T) {
				g := d.gateway
				if style == "amqp" {
					// The amqp gateway waits longer than the others
					// (brokerCallTimeout); this one times out as they do.
					g = f.launch(ctx, t, out, ports, "amqp", "gateway", []string{"AMQP_URL=" + rabbit.URL, fmt.Sprintf("CALL_TIMEOUT_MS=%d", callTimeout.Milliseconds())})
					waitReady(ctx, t, g)
				}
				checkBacklog(ctx, t, d, g, callTimeout, mongo, maria, rabbit)
			})
		}
	})
}
