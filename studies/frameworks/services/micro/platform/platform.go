// Package platform connects a program to the rest of the deployment the way
// go-micro's documentation configures a service: a name, an address, and a
// registry (NATS, one of the registries the documentation lists; its default,
// multicast DNS, does not work where multicast is not routed, as on a
// loopback-only host).
package platform

import (
	"log"
	"os"
	"time"

	"go-micro.dev/v5"
	"go-micro.dev/v5/broker"
	"go-micro.dev/v5/registry"
	"go-micro.dev/v5/registry/nats"
)

// Env returns the environment variable name, which the program cannot run
// without.
func Env(name string) string {
	v := os.Getenv(name)
	if v == "" {
		log.Fatalf("%s is not set", name)
	}
	return v
}

// Registry is the NATS registry at REGISTRY_ADDR (host:port).
func Registry() registry.Registry {
	return nats.NewNatsRegistry(registry.Addrs(Env("REGISTRY_ADDR")))
}

// Duration reads a Go duration ("5s", "500ms") from the environment
// variable name, def when it is not set.
func Duration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		log.Fatalf("%s=%q: want a positive duration such as 5s", name, v)
	}
	return d
}

// ServiceOptions name a service, bind it to the address in the environment
// variable addrEnv and register it in the registry. The broker is the
// in-memory one: nothing here publishes events, and go-micro's default HTTP
// broker would listen on every interface. The transport is go-micro's HTTP
// transport with a request's reads bounded by READ_TIMEOUT and MaxRequest.
func ServiceOptions(name, addrEnv string) []micro.Option {
	return []micro.Option{
		micro.Name(name),
		micro.Address(Env(addrEnv)),
		micro.Broker(broker.NewMemoryBroker()),
		micro.Registry(Registry()),
		micro.Transport(Transport(Duration("READ_TIMEOUT", 10*time.Second), MaxRequest)),
	}
}
