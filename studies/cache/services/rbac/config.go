package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/msbench/msbench/studies/cache/services/internal/web"
)

// strategy names where GET /roles gets its data; see README.md.
type strategy string

const (
	strategyDB           strategy = "db"
	strategyRedis        strategy = "redis"
	strategyInproc       strategy = "inproc"
	strategyInprocPubsub strategy = "inproc-pubsub"
)

// defaultTTL is how long a cached snapshot lives, in Redis and in process
// alike, so the variants differ only in where the cache is.
const defaultTTL = 60 * time.Second

type config struct {
	addr        string
	databaseURL string
	redisURL    string
	strategy    strategy
	instance    string
	ttl         time.Duration
	// singleflight lets concurrent misses share one database read; off by
	// default because the study measures the stampede without it.
	singleflight bool
}

func configFromEnv() (config, error) {
	var cfg config
	var err error
	if cfg.addr, err = web.ListenAddr(); err != nil {
		return cfg, err
	}
	cfg.databaseURL = os.Getenv("DATABASE_URL")
	if cfg.databaseURL == "" {
		return cfg, errors.New("DATABASE_URL is not set (postgres://user:password@host:port/db?sslmode=disable)")
	}
	switch s := strategy(os.Getenv("STRATEGY")); s {
	case strategyDB, strategyInproc:
		cfg.strategy = s
	case strategyRedis, strategyInprocPubsub:
		cfg.strategy = s
		if cfg.redisURL = os.Getenv("REDIS_URL"); cfg.redisURL == "" {
			return cfg, fmt.Errorf("STRATEGY=%s needs REDIS_URL (redis://host:port/db)", s)
		}
	default:
		return cfg, fmt.Errorf("STRATEGY=%q: want db, redis, inproc or inproc-pubsub", s)
	}
	if cfg.instance = os.Getenv("INSTANCE"); cfg.instance == "" {
		_, cfg.instance, _ = net.SplitHostPort(cfg.addr) // ADDR is checked above
	}
	cfg.ttl = defaultTTL
	if v := os.Getenv("CACHE_TTL"); v != "" {
		if cfg.ttl, err = time.ParseDuration(v); err != nil || cfg.ttl <= 0 {
			return cfg, fmt.Errorf("CACHE_TTL=%q: want a positive duration such as 60s", v)
		}
	}
	switch v := os.Getenv("SINGLEFLIGHT"); v {
	case "", "0":
	case "1":
		if cfg.strategy == strategyDB {
			return cfg, errors.New("SINGLEFLIGHT=1 coalesces cache misses; STRATEGY=db has no cache")
		}
		cfg.singleflight = true
	default:
		return cfg, fmt.Errorf("SINGLEFLIGHT=%q: want 1 or 0", v)
	}
	return cfg, nil
}
