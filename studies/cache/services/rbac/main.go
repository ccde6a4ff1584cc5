// Command rbac is the role-and-permission service of the cache study: GET
// /roles serves every role with its permissions from Postgres directly, or
// through Redis or an in-process cache, as env STRATEGY says. See
// ../README.md.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"runtime"
	"runtime/debug"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/msbench/msbench/studies/cache/services/internal/web"
)

func main() { web.Main(run) }

func run(ctx context.Context) error {
	cfg, err := configFromEnv()
	if err != nil {
		return err
	}
	// The runtime itself reads GOMAXPROCS and GOMEMLIMIT from the
	// environment, which is how the study caps it as the paper did (1 and
	// 256MiB); the log says what is in force.
	log.Printf("instance %s: strategy %s, cache TTL %s, singleflight %t, GOMAXPROCS %d, memory limit %d bytes",
		cfg.instance, cfg.strategy, cfg.ttl, cfg.singleflight, runtime.GOMAXPROCS(0), debug.SetMemoryLimit(-1))

	st := &stats{}
	db, err := openStore(ctx, cfg.databaseURL, &st.dbQueries)
	if err != nil {
		return err
	}
	defer db.close()
	r := &reads{db: db, stats: st, outage: outage{name: "cache"}}
	if cfg.singleflight {
		r.flight = &singleflight.Group{}
	}
	switch cfg.strategy {
	case strategyInproc:
		r.cache = &inprocCache{ttl: cfg.ttl}
	case strategyRedis, strategyInprocPubsub:
		rdb, err := newRedisClient(cfg.redisURL)
		if err != nil {
			return err
		}
		defer rdb.Close()
		r.cache = redisStrategy(ctx, cfg, rdb, db.pool.Config().ConnConfig.Database)
	}
	srv := &server{store: db, reads: r, stats: st, instance: cfg.instance}
	return web.Serve(ctx, cfg.addr, srv.routes())
}

// redisStrategy builds the cache of a strategy that uses Redis. Its key and
// channel are named after the database, so instances that share the
// database share them, and deployments on other databases never meet.
func redisStrategy(ctx context.Context, cfg config, rdb *redis.Client, database string) cache {
	prefix := "rbac:" + database + ":"
	if cfg.strategy == strategyRedis {
		return &redisCache{rdb: rdb, key: prefix + "roles", ttl: cfg.ttl}
	}
	c := &broadcastCache{
		inprocCache: &inprocCache{ttl: cfg.ttl},
		rdb:         rdb,
		channel:     prefix + "invalidate",
		origin:      fmt.Sprintf("%s-%s", cfg.instance, rand.Text()),
	}
	go c.listen(ctx)
	return c
}
