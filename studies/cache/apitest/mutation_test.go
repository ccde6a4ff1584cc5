package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
)

// checkMutationThenReads grants a permission through the gateway and reads
// every instance: the staleness the study measures. db and redis are fresh
// at once; inproc is stale on the two instances that did not take the
// mutation until their copies expire; inproc-pubsub is fresh on all soon.
func checkMutationThenReads(ctx context.Context, t *testing.T, d *deployment) {
	const roleID = 5
	target := dbRoles(ctx, t, d.db)[roleID-1]
	permID := int64(1)
	for target.holds(permID) {
		permID++
	}
	round(t, d) // every instance now holds a copy, where it caches
	before := dbVersion(ctx, t, d.db)

	m := apicheck.Call(t, http.MethodPost, d.gateway.base+"/roles/5/permissions", jsonType, []byte(`{"permission_id": `+itoa(permID)+`}`))
	mustStatus(t, "POST /roles/5/permissions through the gateway", m, http.StatusOK)
	if v := version(t, m); v != before+1 {
		t.Fatalf("mutation answered X-Data-Version %d, want %d", v, before+1)
	}
	if d.strategy == "db" {
		apicheck.WantTimings(t, m, "db", "handler")
	} else {
		apicheck.WantTimings(t, m, "db", "invalidate", "handler")
	}
	mutator := m.Header.Get("X-Instance")
	fresh := func(r apicheck.Response) bool {
		roles := apicheck.Decode[[]role](t, r)
		return version(t, r) == before+1 && roles[roleID-1].holds(permID)
	}

	rs := round(t, d)
	for i, r := range rs {
		inst, isFresh := r.Header.Get("X-Instance"), fresh(r)
		switch d.strategy {
		case "db", "redis":
			if !isFresh {
				t.Errorf("%s: instance %s answered version %d right after the mutation, want %d",
					d.strategy, inst, version(t, r), before+1)
			}
			if d.strategy == "redis" {
				// The mutation deleted the shared copy: the first read refills it.
				want := "hit"
				if i == 0 {
					want = "miss"
				}
				wantHeader(t, r, "X-Cache", want)
			}
		case "inproc":
			switch {
			case inst == mutator && !isFresh:
				t.Errorf("inproc: instance %s that took the mutation answers version %d, want %d",
					inst, version(t, r), before+1)
			case inst != mutator && (version(t, r) != before || r.Header.Get("X-Cache") != "hit"):
				t.Errorf("inproc: instance %s answers version %d (X-Cache %s) right after a mutation through %s, "+
					"want its cached copy of version %d", inst, version(t, r), r.Header.Get("X-Cache"), mutator, before)
			}
		}
	}
	// inproc: the other instances' copies expire at most ttl after they
	// were filled. inproc-pubsub: the broadcast must be much faster.
	limit := map[string]time.Duration{"inproc": ttl + 2*time.Second, "inproc-pubsub": time.Second}[d.strategy]
	if limit > 0 {
		took, stale := waitFresh(t, d, fresh, limit)
		t.Logf("%s: every instance fresh %s after the mutation (CACHE_TTL %s), after %d more stale reads",
			d.strategy, took.Round(time.Millisecond), ttl, stale)
	}
}

// waitFresh reads every instance through the gateway until all are fresh,
// failing after limit, and returns how long that took and how many stale
// answers came meanwhile.
func waitFresh(t *testing.T, d *deployment, fresh func(apicheck.Response) bool, limit time.Duration) (time.Duration, int) {
	t.Helper()
	began := time.Now()
	stale := 0
	for {
		n := 0
		for _, r := range round(t, d) {
			if !fresh(r) {
				n++
			}
		}
		stale += n
		if n == 0 {
			return time.Since(began), stale
		}
		if time.Since(began) > limit {
			t.Fatalf("%s: %d instances still stale %s after the mutation", d.strategy, n, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkMoreMutations: revoke and rename, each answered with the next
// version and read back fresh from the instance that took it, whatever the
// strategy; a repeated grant is accepted.
func checkMoreMutations(ctx context.Context, t *testing.T, d *deployment) {
	a := d.instances[0]
	v := dbVersion(ctx, t, d.db)
	readRole := func(id string) role {
		r := apicheck.Get(t, a.base+"/roles/"+id)
		mustStatus(t, "GET /roles/"+id, r, http.StatusOK)
		if got := version(t, r); got != v {
			t.Errorf("GET /roles/%s answered version %d after the mutation that made %d", id, got, v)
		}
		return apicheck.Decode[role](t, r)
	}
	for range 2 {
		r := apicheck.Call(t, http.MethodPost, a.base+"/roles/6/permissions", jsonType, []byte(`{"permission_id": 3}`))
		mustStatus(t, "POST /roles/6/permissions", r, http.StatusOK)
		v++
		wantHeader(t, r, "X-Data-Version", itoa(v))
		if got := apicheck.Decode[map[string]int64](t, r); got["role_id"] != 6 || got["permission_id"] != 3 {
			t.Errorf("grant answered %v", got)
		}
		if !readRole("6").holds(3) {
			t.Error("role 6 lacks permission 3 after the grant")
		}
	}

	r := apicheck.Call(t, http.MethodDelete, a.base+"/roles/6/permissions/3", "", nil)
	mustStatus(t, "DELETE /roles/6/permissions/3", r, http.StatusNoContent)
	v++
	wantHeader(t, r, "X-Data-Version", itoa(v))
	if readRole("6").holds(3) {
		t.Error("role 6 still holds permission 3 after the revoke")
	}

	r = apicheck.Call(t, http.MethodPatch, a.base+"/roles/6", jsonType, []byte(`{"name": "renamed six"}`))
	mustStatus(t, "PATCH /roles/6", r, http.StatusOK)
	v++
	wantHeader(t, r, "X-Data-Version", itoa(v))
	if got := apicheck.Decode[role](t, r); got.ID != 6 || got.Name != "renamed six" {
		t.Errorf("rename answered %+v", got)
	}
	if got := readRole("6").Name; got != "renamed six" {
		t.Errorf("role 6 is named %q after the rename", got)
	}
	if got := dbVersion(ctx, t, d.db); got != v {
		t.Errorf("data_version %d, want %d", got, v)
	}
}
