package main

import (
	"context"
	"sync/atomic"
	"time"
)

// cache is where a strategy keeps the snapshot between reads.
type cache interface {
	// get returns the cached snapshot; ok is false on a miss.
	get(ctx context.Context) (snap *snapshot, ok bool, err error)
	set(ctx context.Context, snap *snapshot) error
	// invalidate runs after a mutation has committed.
	invalidate(ctx context.Context) error
}

// inprocCache keeps the snapshot in this process for ttl. Readers take no
// lock: an entry is replaced whole, never changed. Invalidation reaches
// this instance only, so other instances serve their copies until their
// TTL runs out; that staleness is what the study measures.
type inprocCache struct {
	ttl   time.Duration
	entry atomic.Pointer[inprocEntry]
}

type inprocEntry struct {
	snap    *snapshot
	expires time.Time
}

func (c *inprocCache) get(context.Context) (*snapshot, bool, error) {
	e := c.entry.Load()
	if e == nil || !time.Now().Before(e.expires) {
		return nil, false, nil
	}
	return e.snap, true, nil
}

func (c *inprocCache) set(_ context.Context, snap *snapshot) error {
	c.entry.Store(&inprocEntry{snap: snap, expires: time.Now().Add(c.ttl)})
	return nil
}

func (c *inprocCache) invalidate(context.Context) error {
	c.entry.Store(nil)
	return nil
}
