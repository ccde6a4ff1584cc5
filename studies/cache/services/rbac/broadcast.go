package main

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"
)

// broadcastCache is an in-process cache whose invalidations reach every
// instance: a mutation drops the local copy and publishes on a Redis
// channel, and every instance drops its copy on a message (listen).
type broadcastCache struct {
	*inprocCache
	rdb     *redis.Client
	channel string
	// origin tells this process's own messages apart: it has dropped its
	// copy already, and dropping a copy refilled since would cost a read.
	origin string
}

func (c *broadcastCache) invalidate(ctx context.Context) error {
	c.inprocCache.invalidate(ctx)
	if err := c.rdb.Publish(ctx, c.channel, c.origin).Err(); err != nil {
		return fmt.Errorf("could not broadcast the invalidation on %s: %w", c.channel, err)
	}
	return nil
}

// listen drops the local copy on every other instance's invalidation until
// ctx is done. go-redis reconnects and resubscribes by itself; the copy is
// dropped on every (re)subscription too, because messages published while
// the connection was down are lost, not queued.
func (c *broadcastCache) listen(ctx context.Context) {
	ps := c.rdb.Subscribe(ctx, c.channel)
	defer ps.Close()
	msgs := ps.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				return // the client was closed
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					log.Printf("subscribed to %s; dropping the cached copy in case invalidations were missed", c.channel)
					c.inprocCache.invalidate(ctx)
				}
			case *redis.Message:
				if m.Payload != c.origin {
					c.inprocCache.invalidate(ctx)
				}
			}
		}
	}
}
