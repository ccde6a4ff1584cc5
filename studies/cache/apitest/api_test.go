package apitest

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/runner/deploytest"
)

// testTimeout bounds the whole test, the build included.
const testTimeout = 5 * time.Minute

// TestCacheStudy starts one deployment per strategy from the study file,
// checks each deployment's API, then stops Postgres and Redis under them.
func TestCacheStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the services, starts 8 deployments of 4 to 6 processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	lab := deploytest.Open(ctx, t, "../study.yaml", "")
	ds := map[string]*deployment{}
	for _, s := range strategies {
		ds[s] = deploy(ctx, t, lab, s)
	}

	t.Run("api", func(t *testing.T) {
		for _, s := range strategies {
			d := ds[s]
			t.Run(s, func(t *testing.T) {
				t.Parallel()
				// In this order: read wants cold caches.
				t.Run("read", func(t *testing.T) { checkRead(ctx, t, d) })
				t.Run("round-robin", func(t *testing.T) { checkRoundRobin(t, d) })
				t.Run("mutation-then-reads", func(t *testing.T) { checkMutationThenReads(ctx, t, d) })
				t.Run("more-mutations", func(t *testing.T) { checkMoreMutations(ctx, t, d) })
				t.Run("stampede", func(t *testing.T) { checkStampede(t, d) })
				t.Run("bad-input", func(t *testing.T) { checkBadInput(ctx, t, d) })
			})
		}
	})
	// The limits are web.Serve's and the gateway's, whatever the strategy.
	t.Run("limits", func(t *testing.T) {
		d := ds["db"]
		t.Run("hostile/gateway", func(t *testing.T) {
			t.Parallel()
			checkHostile(t, d.gateway)
		})
		t.Run("hostile/rbac", func(t *testing.T) {
			t.Parallel()
			checkHostile(t, d.instances[0])
		})
		t.Run("sigterm", func(t *testing.T) {
			t.Parallel()
			checkSigterm(ctx, t, lab)
		})
	})
	t.Run("postgres-down", func(t *testing.T) { checkPostgresDown(ctx, t, ds) })
	t.Run("redis-down", func(t *testing.T) { checkRedisDown(ctx, t, ds["redis"], ds["inproc-pubsub"]) })
}

// dbRoles reads what GET /roles must answer straight from the tables, by
// other queries than the service's.
func dbRoles(ctx context.Context, t *testing.T, db *pgx.Conn) []role {
	t.Helper()
	rows, _ := db.Query(ctx, "SELECT id, name FROM roles ORDER BY id")
	roles, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (role, error) {
		r := role{Permissions: []permission{}}
		return r, row.Scan(&r.ID, &r.Name)
	})
	if err != nil {
		t.Fatalf("read roles: %v", err)
	}
	byID := map[int64]*role{}
	for i := range roles {
		byID[roles[i].ID] = &roles[i]
	}
	rows, _ = db.Query(ctx, `SELECT rp.role_id, p.id, p.name
		FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id ORDER BY 1, 2`)
	var roleID int64
	var p permission
	if _, err := pgx.ForEachRow(rows, []any{&roleID, &p.ID, &p.Name}, func() error {
		byID[roleID].Permissions = append(byID[roleID].Permissions, p)
		return nil
	}); err != nil {
		t.Fatalf("read grants: %v", err)
	}
	return roles
}

func dbVersion(ctx context.Context, t *testing.T, db *pgx.Conn) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(ctx, "SELECT version FROM data_version").Scan(&v); err != nil {
		t.Fatalf("read data_version: %v", err)
	}
	return v
}

// checkRead: GET /roles and /roles/{id} answer what the tables hold, with
// the headers, on a cold cache and then a warm one.
func checkRead(ctx context.Context, t *testing.T, d *deployment) {
	a := d.instances[0]
	want := dbRoles(ctx, t, d.db)
	if len(want) != 50 {
		t.Fatalf("the seed has %d roles, want 50", len(want))
	}
	for _, r := range want {
		if n := len(r.Permissions); n < 10 || n > 60 {
			t.Errorf("seeded role %s holds %d permissions, want 10 to 60", r.Name, n)
		}
	}
	cached := d.strategy != "db"
	for i, wantCache := range []string{"miss", "hit"} {
		r := apicheck.Get(t, a.base+"/roles")
		mustStatus(t, "GET /roles", r, http.StatusOK)
		wantHeader(t, r, "Content-Type", "application/json")
		// Which instance it is, the study's INSTANCE; round-robin checks
		// that each says its own.
		if r.Header.Get("X-Instance") == "" {
			t.Errorf("request %d: no X-Instance", i+1)
		}
		if got := apicheck.Decode[[]role](t, r); !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: GET /roles differs from the tables", i+1)
		}
		if v := version(t, r); v != 1 {
			t.Errorf("X-Data-Version %d on a new database, want 1", v)
		}
		switch {
		case !cached:
			wantHeader(t, r, "X-Cache", "none")
			apicheck.WantTimings(t, r, "db", "handler")
		case wantCache == "miss":
			wantHeader(t, r, "X-Cache", "miss")
			apicheck.WantTimings(t, r, "cache", "db", "handler")
		default:
			wantHeader(t, r, "X-Cache", "hit")
			apicheck.WantTimings(t, r, "cache", "handler")
		}
	}
	one := apicheck.Get(t, a.base+"/roles/7")
	mustStatus(t, "GET /roles/7", one, http.StatusOK)
	if got := apicheck.Decode[role](t, one); !reflect.DeepEqual(got, want[6]) {
		t.Errorf("GET /roles/7 = %+v, want %+v", got, want[6])
	}
	wantHeader(t, one, "X-Data-Version", "1")
	apicheck.WantError(t, "GET /roles/999", apicheck.Get(t, a.base+"/roles/999"), http.StatusNotFound, "no such role")
}

// round reads GET /roles once from each instance through the gateway, in
// the gateway's order, and returns the answers.
func round(t *testing.T, d *deployment) []apicheck.Response {
	t.Helper()
	var rs []apicheck.Response
	seen := map[string]bool{}
	for range d.instances {
		r := apicheck.Get(t, d.gateway.base+"/roles")
		mustStatus(t, "GET /roles through the gateway", r, http.StatusOK)
		rs = append(rs, r)
		seen[r.Header.Get("X-Instance")] = true
	}
	if len(seen) != len(d.instances) {
		t.Fatalf("%d requests through the gateway reached %d instances, want each once", len(rs), len(seen))
	}
	return rs
}

func checkRoundRobin(t *testing.T, d *deployment) {
	reset := apicheck.Call(t, http.MethodPost, d.gateway.base+"/gateway/stats/reset", "", nil)
	mustStatus(t, "POST /gateway/stats/reset", reset, http.StatusNoContent)
	var order []string
	for range 3 {
		for _, r := range round(t, d) {
			order = append(order, r.Header.Get("X-Instance"))
		}
	}
	for i := 3; i < len(order); i++ {
		if order[i] != order[i-3] {
			t.Fatalf("instances in order %v: not round robin", order)
		}
	}
	got := apicheck.Decode[struct {
		Requests  int64 `json:"requests"`
		Upstreams []struct {
			Addr     string `json:"addr"`
			Requests int64  `json:"requests"`
			Failures int64  `json:"failures"`
		} `json:"upstreams"`
	}](t, apicheck.Get(t, d.gateway.base+"/gateway/stats"))
	if got.Requests != 9 || len(got.Upstreams) != 3 {
		t.Fatalf("gateway stats %+v, want 9 requests over 3 upstreams", got)
	}
	for i, u := range got.Upstreams {
		if u.Addr != d.instances[i].addr || u.Requests != 3 || u.Failures != 0 {
			t.Errorf("upstream %d: %+v, want %s with 3 requests", i, u, d.instances[i].addr)
		}
	}
}
