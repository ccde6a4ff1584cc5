package apitest

import (
	"context"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/runner/deploytest"
)

// setupTimeout bounds the build and the deployments' start, which take
// minutes the first time on a machine (npm ci fills npm's cache, FerretDB
// is compiled) and seconds after; testTimeout bounds the rest.
const (
	setupTimeout = 10 * time.Minute
	testTimeout  = 8 * time.Minute
)

// TestIPCStudy deploys each style's variant of the study from the study
// file, each on a FerretDB, MariaDB and RabbitMQ of its own, more than
// once where checks need other settings (deployments). Side by side, it checks each style's API, bad input, hostile clients of every
// program (HTTP/1.1 of each HTTP server, pipelined floods, HTTP/2 of each
// gRPC service), hostile deadlines and faults: the product service hung,
// and killed (rest, grpc) or the broker restarted (amqp). Then, with
// nothing else running, deadlines under a hung store: the services' cap on
// a call's time, and, one style at a time, that a flood of pages timing
// out leaves no backlog behind. Every program must then stop cleanly on
// SIGTERM with a request in flight.
func TestIPCStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six deployments of the study: FerretDB, MariaDB, RabbitMQ and six Node.js programs each")
	}
	setup, cancelSetup := context.WithTimeout(context.Background(), setupTimeout)
	t.Cleanup(cancelSetup)
	lab := deploytest.Open(setup, t, "../study.yaml", "")
	ds := deployAll(setup, t, lab)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)

	t.Run("styles", func(t *testing.T) {
		for _, style := range styles {
			d := ds[style]
			t.Run(style, func(t *testing.T) {
				t.Parallel()
				t.Run("catalogue", func(t *testing.T) { checkCatalogue(ctx, t, d.stores) })
				t.Run("pages", func(t *testing.T) { checkPages(ctx, t, d) })
				t.Run("not-found", func(t *testing.T) { checkNotFound(t, d) })
				t.Run("bad-input", func(t *testing.T) { checkBadInput(t, d) })
				t.Run("hostile-gateway", func(t *testing.T) { checkHostile(t, d.gateway, "/products/1") })
				t.Run("hostile-deadlines", func(t *testing.T) { checkHostileDeadlines(ctx, t, d) })
				switch style {
				case "rest":
					t.Run("hostile-services", func(t *testing.T) { checkHostileAll(t, d) })
					t.Run("pipelined", func(t *testing.T) { checkPipelined(t, ds["rest-floods"]) })
				case "grpc":
					t.Run("malformed-messages", func(t *testing.T) { checkMalformedGRPC(ctx, t, d) })
					t.Run("exhaustion", func(t *testing.T) { checkGRPCExhaustion(ctx, t, d) })
					t.Run("connection-age", func(t *testing.T) { checkConnectionAge(t, ds["grpc-floods"]) })
					t.Run("pipelined", func(t *testing.T) { checkPipelined(t, ds["grpc-floods"]) })
				case "amqp":
					t.Run("hostile-health", func(t *testing.T) { checkHostileAll(t, d) })
					t.Run("malformed-messages", func(t *testing.T) { checkMalformedAMQP(ctx, t, d) })
					t.Run("broker-restart", func(t *testing.T) { checkBrokerRestart(ctx, t, d) })
					t.Run("service-hung", func(t *testing.T) { checkServiceHung(t, ds["amqp-floods"]) })
				}
				if style != "amqp" {
					t.Run("service-hung", func(t *testing.T) { checkServiceHung(t, d) })
					t.Run("service-killed", func(t *testing.T) { checkServiceKilled(ctx, t, d) })
				}
			})
		}
	})
	// With nothing else running: these hang stores, and bound how long
	// pages take.
	t.Run("deadline-cap", func(t *testing.T) { checkDeadlineCap(ctx, t, ds) })
	t.Run("backlog", func(t *testing.T) {
		for _, style := range styles {
			t.Run(style, func(t *testing.T) { checkBacklog(t, ds[style+"-floods"]) })
		}
	})
	t.Run("stop", func(t *testing.T) { stopCleanly(t, ds) })
}
