// Command gateway is the HTTP entry of the Micro deployment: a go-micro web
// service that verifies the JWT of /universities and calls the hello and
// universities services over go-micro's RPC, finding them in the registry.
package main

import (
	"log"
	"net/http"
	"time"

	"go-micro.dev/v5"
	"go-micro.dev/v5/broker"
	"go-micro.dev/v5/web"

	"github.com/msbench/msbench/studies/frameworks/services/micro/platform"
)

func main() {
	verifier, err := newVerifier(platform.Env("JWT_SECRET"), platform.Env("JWT_AUDIENCE"))
	if err != nil {
		log.Fatal(err)
	}
	reg := platform.Registry()
	// The client side of go-micro: its selector looks services up in the
	// registry and caches what it found.
	rpc := micro.NewService(micro.Name("gateway"), micro.Broker(broker.NewMemoryBroker()), micro.Registry(reg))
	gw := &gateway{client: rpc.Client(), verifier: verifier}
	svc := web.NewService(
		web.Name("gateway"),
		web.Address(platform.Env("ADDR")),
		web.Registry(reg),
		web.MicroService(rpc),
		web.Handler(gw.routes()),
		web.Server(&http.Server{
			ReadHeaderTimeout: platform.Duration("READ_HEADER_TIMEOUT", 5*time.Second),
			ReadTimeout:       platform.Duration("READ_TIMEOUT", 10*time.Second),
			IdleTimeout:       60 * time.Second,
			// Room for a 10 KB query string and a token, not for more.
			MaxHeaderBytes: 16 << 10,
		}),
	)
	if err := svc.Init(); err != nil {
		log.Fatal(err)
	}
	if err := svc.Run(); err != nil {
		log.Fatal(err)
	}
}
