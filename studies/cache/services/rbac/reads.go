package main

import (
	"context"
	"log"

	"golang.org/x/sync/singleflight"
)

// loader reads the snapshot from the database: a *store, or a fake in tests.
type loader interface {
	load(ctx context.Context) (*snapshot, error)
}

// X-Cache values: none when no cache was consulted or it failed.
const (
	cacheHit  = "hit"
	cacheMiss = "miss"
	cacheNone = "none"
)

// reads serves the snapshot to GET /roles and GET /roles/{id}: from the
// cache if the strategy has one and holds it, else from Postgres, storing
// what was read (cache-aside).
type reads struct {
	db    loader
	cache cache // nil for STRATEGY=db
	// flight, when set (SINGLEFLIGHT=1), lets concurrent misses share one
	// database read instead of each making its own (the stampede).
	flight *singleflight.Group
	stats  *stats
	outage outage // of the cache, for a Redis that stops answering
}

// snapshot returns the data to serve and the X-Cache value.
func (r *reads) snapshot(ctx context.Context, tm *timing) (*snapshot, string, error) {
	if r.cache == nil {
		defer tm.stage("db")()
		snap, err := r.db.load(ctx)
		return snap, cacheNone, err
	}
	stop := tm.stage("cache")
	snap, ok, err := r.cache.get(ctx)
	stop()
	r.observeCache(err)
	switch {
	case err != nil:
		// A cache that fails is skipped, not waited for: serve from Postgres.
		defer tm.stage("db")()
		snap, err := r.db.load(ctx)
		return snap, cacheNone, err
	case ok:
		r.stats.cacheHits.Add(1)
		return snap, cacheHit, nil
	}
	r.stats.cacheMisses.Add(1)
	// "db" covers storing the read in the cache too, and for a request that
	// joined another's read (singleflight), the wait for it.
	defer tm.stage("db")()
	if r.flight == nil {
		snap, err := r.fill(ctx)
		return snap, cacheMiss, err
	}
	// The shared read must not fail because the request that started it
	// went away; store.load has its own timeout.
	v, err, _ := r.flight.Do("snapshot", func() (any, error) { return r.refill(context.WithoutCancel(ctx)) })
	if err != nil {
		return nil, cacheMiss, err
	}
	return v.(*snapshot), cacheMiss, nil
}

// fill reads Postgres and stores the snapshot in the cache. Failing to
// store it costs the next reads a miss, not this one its answer.
func (r *reads) fill(ctx context.Context) (*snapshot, error) {
	snap, err := r.db.load(ctx)
	if err != nil {
		return nil, err
	}
	r.observeCache(r.cache.set(ctx, snap))
	return snap, nil
}

// refill is fill for singleflight: it looks in the cache again first, as a
// flight that just ended may have filled it after this request missed, and
// a second read would break the promise of one read per cold cache.
func (r *reads) refill(ctx context.Context) (*snapshot, error) {
	snap, ok, err := r.cache.get(ctx)
	r.observeCache(err)
	if ok {
		return snap, nil
	}
	return r.fill(ctx)
}

// observeCache counts and logs cache failures and notes recoveries.
func (r *reads) observeCache(err error) {
	if err != nil {
		r.stats.cacheErrors.Add(1)
		r.outage.failed(err)
		return
	}
	r.outage.answered()
}

// invalidate runs the strategy's invalidation after a mutation. Its failure
// does not undo the commit, so it is logged, not answered: readers may see
// older data versions until the cached copies expire.
func (r *reads) invalidate(ctx context.Context, tm *timing) {
	if r.cache == nil {
		return
	}
	defer tm.stage("invalidate")()
	if err := r.cache.invalidate(ctx); err != nil {
		r.stats.cacheErrors.Add(1)
		log.Printf("invalidation after a mutation failed, readers may see older data until cached copies expire: %v", err)
	}
}
