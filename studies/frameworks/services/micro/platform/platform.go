// Package platform connects a program to the rest of the deployment the way
// go-micro's documentation configures a service: a name, an address, and a
// registry (NATS, one of the registries the documentation lists; its default,
// multicast DNS, does not work where multicast is not routed, as on a
// loopback-only host).
package platform

import (
	"log"
	"os"

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

// ServiceOptions name a service, bind it to the address in the environment
// variable addrEnv and register it in the registry. The broker is the
// in-memory one: nothing here publishes events, and go-micro's default HTTP
// broker would listen on every interface.
func ServiceOptions(name, addrEnv string) []micro.Option {
	return []micro.Option{
		micro.Name(name),
		micro.Address(Env(addrEnv)),
		micro.Broker(broker.NewMemoryBroker()),
		micro.Registry(Registry()),
	}
}
