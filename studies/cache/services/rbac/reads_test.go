package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sync/singleflight"
)

// fakeDB serves a snapshot of version 1 after a delay, counting reads.
type fakeDB struct {
	reads atomic.Int64
	delay time.Duration
}

func (f *fakeDB) load(context.Context) (*snapshot, error) {
	f.reads.Add(1)
	time.Sleep(f.delay)
	return &snapshot{Version: 1, Roles: []role{{ID: 1, Name: "admin"}}}, nil
}

// brokenCache fails every call, as Redis does while it is down.
type brokenCache struct{}

var errRedisDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (brokenCache) get(context.Context) (*snapshot, bool, error) { return nil, false, errRedisDown }
func (brokenCache) set(context.Context, *snapshot) error         { return errRedisDown }
func (brokenCache) invalidate(context.Context) error             { return errRedisDown }

func read(t *testing.T, r *reads) string {
	t.Helper()
	snap, status, err := r.snapshot(t.Context(), &timing{start: time.Now()})
	if err != nil || snap.Version != 1 {
		t.Fatalf("snapshot %+v, %v; want version 1", snap, err)
	}
	return status
}

func TestReadsWithoutCache(t *testing.T) {
	db := &fakeDB{}
	r := &reads{db: db, stats: &stats{}}
	for range 3 {
		if got := read(t, r); got != cacheNone {
			t.Errorf("X-Cache %s, want none", got)
		}
	}
	if n := db.reads.Load(); n != 3 {
		t.Errorf("%d database reads for 3 requests, want 3", n)
	}
}

func TestReadsInproc(t *testing.T) {
	db := &fakeDB{}
	r := &reads{db: db, cache: &inprocCache{ttl: time.Minute}, stats: &stats{}}
	want := []string{cacheMiss, cacheHit, cacheHit}
	for _, w := range want {
		if got := read(t, r); got != w {
			t.Errorf("X-Cache %s, want %s", got, w)
		}
	}
	r.invalidate(t.Context(), &timing{})
	if got := read(t, r); got != cacheMiss {
		t.Errorf("X-Cache %s after invalidation, want miss", got)
	}
	if n, s := db.reads.Load(), r.stats.json(); n != 2 || s.CacheHits != 2 || s.CacheMisses != 2 {
		t.Errorf("%d reads, stats %+v; want 2 reads, 2 hits, 2 misses", n, s)
	}
}

func TestReadsBrokenCacheServesFromDatabase(t *testing.T) {
	db := &fakeDB{}
	r := &reads{db: db, cache: brokenCache{}, stats: &stats{}, outage: outage{name: "cache"}}
	for range 2 {
		if got := read(t, r); got != cacheNone {
			t.Errorf("X-Cache %s with the cache down, want none", got)
		}
	}
	r.invalidate(t.Context(), &timing{})
	if n, s := db.reads.Load(), r.stats.json(); n != 2 || s.CacheErrors != 3 || s.CacheHits+s.CacheMisses != 0 {
		t.Errorf("%d reads, stats %+v; want 2 reads and 3 cache errors", n, s)
	}
}

// TestStampede: concurrent first requests on a cold cache each read the
// database, unless singleflight makes them share one read. synctest's
// fake clock makes every request miss before the first read ends.
func TestStampede(t *testing.T) {
	const requests = 50
	for _, tc := range []struct {
		name         string
		singleflight bool
		wantReads    int64
	}{
		{"plain", false, requests},
		{"singleflight", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := &fakeDB{delay: 5 * time.Millisecond}
				r := &reads{db: db, cache: &inprocCache{ttl: time.Minute}, stats: &stats{}}
				if tc.singleflight {
					r.flight = &singleflight.Group{}
				}
				var wg sync.WaitGroup
				for range requests {
					wg.Go(func() {
						if got := read(t, r); got != cacheMiss {
							t.Errorf("X-Cache %s on a cold cache, want miss", got)
						}
					})
				}
				wg.Wait()
				if n := db.reads.Load(); n != tc.wantReads {
					t.Errorf("%d database reads for %d concurrent misses, want %d", n, requests, tc.wantReads)
				}
				if got := read(t, r); got != cacheHit {
					t.Errorf("X-Cache %s after the stampede, want hit", got)
				}
			})
		})
	}
}

func TestInprocCacheExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &inprocCache{ttl: time.Second}
		c.set(t.Context(), &snapshot{Version: 7})
		time.Sleep(999 * time.Millisecond)
		if snap, ok, _ := c.get(t.Context()); !ok || snap.Version != 7 {
			t.Fatalf("get before the TTL: %v, %v; want version 7", snap, ok)
		}
		time.Sleep(time.Millisecond)
		if _, ok, _ := c.get(t.Context()); ok {
			t.Fatal("hit at the TTL, want a miss")
		}
	})
}
