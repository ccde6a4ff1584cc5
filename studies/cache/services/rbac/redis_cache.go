package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis client limits: a cache that does not answer at once is worth less
// than going straight to Postgres, so timeouts are short and a refused dial
// is not tried again; one retry lets a command that met a connection broken
// by a Redis restart run again on a fresh one.
const (
	redisTimeout    = 500 * time.Millisecond
	redisMaxRetries = 1
	redisDialTries  = 1
)

func newRedisClient(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opts.DialTimeout = redisTimeout
	opts.ReadTimeout = redisTimeout
	opts.WriteTimeout = redisTimeout
	opts.MaxRetries = redisMaxRetries
	opts.DialerRetries = redisDialTries
	redis.SetLogger(quietRedisLog{})
	return redis.NewClient(opts), nil
}

// quietRedisLog drops go-redis's own log, which has a line for every failed
// dial: each of those failures also reaches this service as an error, which
// it logs once per outage instead (outage).
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

// redisCache is cache-aside in Redis: the snapshot as JSON under one key
// with a TTL, shared by every instance; invalidation deletes the key.
type redisCache struct {
	rdb *redis.Client
	key string
	ttl time.Duration
}

func (c *redisCache) get(ctx context.Context) (*snapshot, bool, error) {
	data, err := c.rdb.Get(ctx, c.key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redis GET %s: %w", c.key, err)
	}
	// Decoding is part of what a Redis hit costs, as in any cache-aside
	// service that keeps objects rather than finished answers.
	var snap snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, false, fmt.Errorf("decode redis %s: %w", c.key, err)
	}
	return &snap, true, nil
}

func (c *redisCache) set(ctx context.Context, snap *snapshot) error {
	data, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	if err := c.rdb.Set(ctx, c.key, data, c.ttl).Err(); err != nil {
		return fmt.Errorf("redis SET %s: %w", c.key, err)
	}
	return nil
}

func (c *redisCache) invalidate(ctx context.Context) error {
	if err := c.rdb.Del(ctx, c.key).Err(); err != nil {
		return fmt.Errorf("redis DEL %s: %w", c.key, err)
	}
	return nil
}
