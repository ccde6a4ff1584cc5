package main

import "sync/atomic"

// stats are the counters GET /stats reports, since start or the last
// POST /stats/reset. Safe for concurrent use.
type stats struct {
	dbQueries   atomic.Int64 // statements sent to Postgres while serving
	cacheHits   atomic.Int64
	cacheMisses atomic.Int64
	cacheErrors atomic.Int64 // failed cache calls: lookups, fills, invalidations
	requests    atomic.Int64 // API requests: /roles and below
}

type statsJSON struct {
	DBQueries   int64 `json:"db_queries"`
	CacheHits   int64 `json:"cache_hits"`
	CacheMisses int64 `json:"cache_misses"`
	CacheErrors int64 `json:"cache_errors"`
	Requests    int64 `json:"requests"`
}

func (s *stats) json() statsJSON {
	return statsJSON{
		DBQueries:   s.dbQueries.Load(),
		CacheHits:   s.cacheHits.Load(),
		CacheMisses: s.cacheMisses.Load(),
		CacheErrors: s.cacheErrors.Load(),
		Requests:    s.requests.Load(),
	}
}

// reset zeroes the counters one by one: requests in flight meanwhile may
// count in some and not others.
func (s *stats) reset() {
	for _, c := range []*atomic.Int64{&s.dbQueries, &s.cacheHits, &s.cacheMisses, &s.cacheErrors, &s.requests} {
		c.Store(0)
	}
}
