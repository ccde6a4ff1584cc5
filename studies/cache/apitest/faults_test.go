package apitest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
)

// quickly is how fast an outage must be answered: a stopped server
// refuses connections, which the services answer at once, well within
// their 5 s database timeout, which is for a server that hangs.
const quickly = time.Second

// checkPostgresDown stops Postgres under every deployment: mutations and
// reads that miss answer 503 quickly, cached copies are still served, and
// everything works again once Postgres is back.
func checkPostgresDown(ctx context.Context, t *testing.T, ds map[string]*deployment) {
	warmed := time.Now()
	for _, s := range strategies {
		refill(t, ds[s].instances[0])
	}
	for _, s := range strategies {
		outage(t, ds[s], "db")
	}
	t.Logf("postgres killed in %s", time.Since(warmed).Round(time.Millisecond))

	for _, s := range strategies {
		a := ds[s].instances[0]
		r := apicheck.Get(t, a.base+"/roles")
		switch {
		case s == "db":
			wantQuickError(t, s+" read", r, http.StatusServiceUnavailable, "database unavailable")
		case time.Since(warmed) < ttl-time.Second:
			// The copy filled before the outage is still good.
			if apicheck.WantStatus(t, s+" read of a copy filled before the outage", r, http.StatusOK) {
				wantHeader(t, r, "X-Cache", "hit")
			}
		}
		m := apicheck.Call(t, http.MethodPost, a.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 2}`))
		wantQuickError(t, s+" mutation", m, http.StatusServiceUnavailable, "database unavailable")
	}
	// Once the copies have expired, every read must reach the database.
	time.Sleep(time.Until(warmed.Add(ttl + 100*time.Millisecond)))
	for _, s := range strategies {
		r := apicheck.Get(t, ds[s].instances[0].base+"/roles")
		wantQuickError(t, s+" read after the TTL", r, http.StatusServiceUnavailable, "database unavailable")
	}

	for _, s := range strategies {
		if err := ds[s].dep.Restart(ctx, "db"); err != nil {
			t.Fatalf("%s: restart postgres: %v", s, err)
		}
	}
	back := time.Now()
	for _, s := range strategies {
		a := ds[s].instances[0]
		r := waitStatus(t, a.base+"/roles", http.StatusOK, 10*time.Second)
		t.Logf("%s: reads answer again %s after Postgres is back", s, time.Since(back).Round(time.Millisecond))
		m := apicheck.Call(t, http.MethodPost, a.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 2}`))
		mustStatus(t, s+" mutation after the outage", m, http.StatusOK)
		if version(t, m) <= version(t, r) {
			t.Errorf("%s: mutation after the outage answered version %d, a read before it %d", s, version(t, m), version(t, r))
		}
	}
}

// checkRedisDown stops Redis: the redis strategy serves from Postgres; the
// inproc-pubsub strategy commits mutations it cannot broadcast, leaving the
// other instances stale. Both recover once Redis is back.
func checkRedisDown(ctx context.Context, t *testing.T, redis, pubsub *deployment) {
	ra := redis.instances[0]
	pa, pb := pubsub.instances[0], pubsub.instances[1]
	warmed := time.Now()
	refill(t, pb)
	outage(t, redis, "redis")
	outage(t, pubsub, "redis")

	resetStats(t, ra)
	r := apicheck.Get(t, ra.base+"/roles")
	if apicheck.WantStatus(t, "redis: a read with Redis down", r, http.StatusOK) {
		wantHeader(t, r, "X-Cache", "none")
	}
	if r.Took > quickly {
		t.Errorf("redis: a read with Redis down took %s", r.Took)
	}
	m := apicheck.Call(t, http.MethodPost, ra.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 4}`))
	mustStatus(t, "redis: a mutation with Redis down", m, http.StatusOK)
	r = apicheck.Get(t, ra.base+"/roles")
	wantHeader(t, r, "X-Cache", "none")
	if version(t, r) != version(t, m) {
		t.Errorf("redis: read version %d after the mutation made %d; Postgres is fresh", version(t, r), version(t, m))
	}
	if st := getStats(t, ra); st.CacheErrors < 3 || st.CacheHits+st.CacheMisses != 0 {
		t.Errorf("redis: stats %+v with Redis down, want 3 cache errors (two reads, one invalidation)", st)
	}

	m = apicheck.Call(t, http.MethodPost, pa.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 4}`))
	mustStatus(t, "inproc-pubsub: a mutation with Redis down", m, http.StatusOK)
	broadcastVersion := version(t, m)
	if !strings.Contains(readLog(pa), "could not broadcast") {
		t.Error("inproc-pubsub: the mutating instance does not log the failed broadcast")
	}
	if time.Since(warmed) < ttl-time.Second {
		if r := apicheck.Get(t, pb.base+"/roles"); version(t, r) >= broadcastVersion {
			t.Errorf("inproc-pubsub: instance b answered version %d without the broadcast of %d", version(t, r), broadcastVersion)
		}
	}

	for _, d := range []*deployment{redis, pubsub} {
		if err := d.dep.Restart(ctx, "redis"); err != nil {
			t.Fatalf("%s: restart redis: %v", d.strategy, err)
		}
	}
	back := time.Now()
	waitFor(t, "redis: reads use Redis again", 10*time.Second, func() bool {
		return apicheck.Get(t, ra.base+"/roles").Header.Get("X-Cache") == "miss"
	})
	wantHeader(t, apicheck.Get(t, ra.base+"/roles"), "X-Cache", "hit")
	waitFor(t, "inproc-pubsub: instance b subscribes again", 10*time.Second, func() bool {
		return strings.Count(readLog(pb), "subscribed to") >= 2
	})
	t.Logf("both strategies use Redis again %s after it is back", time.Since(back).Round(time.Millisecond))
	if r := apicheck.Get(t, pb.base+"/roles"); version(t, r) < broadcastVersion {
		t.Errorf("inproc-pubsub: b answers version %d after resubscribing, want %d", version(t, r), broadcastVersion)
	}
	// Broadcasts reach b again: its warm copy goes at the next mutation.
	apicheck.Get(t, pb.base+"/roles")
	m = apicheck.Call(t, http.MethodPost, pa.base+"/roles/1/permissions", jsonType, []byte(`{"permission_id": 5}`))
	mustStatus(t, "inproc-pubsub: a mutation after Redis is back", m, http.StatusOK)
	waitFor(t, "inproc-pubsub: b gets the broadcast", time.Second, func() bool {
		return version(t, apicheck.Get(t, pb.base+"/roles")) == version(t, m)
	})
}

// refill makes s hold a copy filled now, where its strategy caches.
func refill(t *testing.T, s *service) {
	t.Helper()
	drop(t, s)
	mustStatus(t, "GET /roles", apicheck.Get(t, s.base+"/roles"), http.StatusOK)
}

// outage kills a dependency of d, as a crash would, behind its services'
// back, and brings it back if the test fails before it does, so that the
// checks after it do not fail for want of it.
func outage(t *testing.T, d *deployment, dep string) {
	t.Helper()
	if err := d.dep.Kill(dep); err != nil {
		t.Fatalf("%s: %v", d.strategy, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if err := d.dep.Restart(context.Background(), dep); err != nil {
				t.Errorf("%s: restart %s: %v", d.strategy, dep, err)
			}
		}
	})
}

func wantQuickError(t *testing.T, what string, r apicheck.Response, status int, reason string) {
	t.Helper()
	apicheck.WantError(t, what, r, status, reason)
	if r.Took > quickly {
		t.Errorf("%s: answered %d after %s, want within %s", what, r.Status, r.Took, quickly)
	}
}

// waitStatus GETs url until it answers status, failing after limit.
func waitStatus(t *testing.T, url string, status int, limit time.Duration) apicheck.Response {
	t.Helper()
	var last apicheck.Response
	waitFor(t, url+" answers "+http.StatusText(status), limit, func() bool {
		last = apicheck.Get(t, url)
		return last.Status == status
	})
	return last
}

// waitFor polls cond until it holds, failing after limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
