// Command gateway is the API gateway of the cache study: it passes every
// request to the next of the rbac instances in env UPSTREAMS, round robin,
// and counts what each got. See ../README.md.
package main

import (
	"context"
	"log"
	"os"

	"github.com/msbench/msbench/studies/cache/services/internal/web"
)

func main() { web.Main(run) }

func run(ctx context.Context) error {
	addr, err := web.ListenAddr()
	if err != nil {
		return err
	}
	upstreams, err := parseUpstreams(os.Getenv("UPSTREAMS"))
	if err != nil {
		return err
	}
	log.Printf("balancing over %d upstreams: %s", len(upstreams), os.Getenv("UPSTREAMS"))
	return web.Serve(ctx, addr, newGateway(upstreams).routes())
}
