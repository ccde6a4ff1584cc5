package apitest

import (
	"net/http"
	"testing"
)

// checkStampede sends 50 concurrent requests to an instance whose cache is
// cold and reads how many database queries they cost: one per miss without
// singleflight, exactly one with it. How many of the 50 miss depends on how
// the machine schedules them, so only the study measures the stampede's
// size; this checks that misses are not coalesced unless asked.
func checkStampede(t *testing.T, d *deployment) {
	const n = 50
	targets := []*service{d.instances[0]}
	if d.single != nil {
		targets = append(targets, d.single)
	}
	for _, s := range targets {
		single := s == d.single
		drop(t, s)
		resetStats(t, s)
		for _, r := range burst(t, s.base, "/roles", n) {
			mustStatus(t, "GET /roles in the burst", r, http.StatusOK)
		}
		st := getStats(t, s)
		t.Logf("%s instance %s (singleflight %v): %d concurrent first requests cost %d database queries (%d misses, %d hits)",
			d.strategy, s.name, single, n, st.DBQueries, st.CacheMisses, st.CacheHits)
		switch {
		case st.Requests != n:
			t.Errorf("stats count %d requests, want %d", st.Requests, n)
		case d.strategy == "db":
			if st.DBQueries != n || st.CacheHits+st.CacheMisses != 0 {
				t.Errorf("stats %+v, want %d queries and no cache", st, n)
			}
		case st.CacheHits+st.CacheMisses != n:
			t.Errorf("stats %+v: hits and misses do not add up to %d", st, n)
		case single:
			if st.DBQueries != 1 {
				t.Errorf("SINGLEFLIGHT=1: %d database queries, want 1", st.DBQueries)
			}
		case st.DBQueries != st.CacheMisses || st.DBQueries < 1:
			t.Errorf("stats %+v: want one query per miss", st)
		}
	}
}
