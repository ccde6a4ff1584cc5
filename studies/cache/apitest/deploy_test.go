package apitest

import (
	"context"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
)

const (
	// ttl is the services' CACHE_TTL: short, so that staleness ends within
	// the test, and long enough to tell an expiry from an invalidation.
	ttl = 5 * time.Second
	// The services' READ_HEADER_TIMEOUT and READ_TIMEOUT, short so the
	// hostile cases end quickly.
	readHeaderTimeout = time.Second
	readTimeout       = 2 * time.Second
)

var strategies = []string{"db", "redis", "inproc", "inproc-pubsub"}

// service is one running instance, as the tests address it.
type service struct {
	name    string
	addr    string
	base    string // http://addr
	logPath string
}

// deployment is one strategy's variant of the study with three instances
// behind the gateway, as in the paper, on a Postgres and a Redis of its
// own; for a caching strategy, also an instance with SINGLEFLIGHT=1 (which
// no variant of the study sets), in a deployment of its own, for the
// stampede.
type deployment struct {
	strategy  string
	dep       *runner.Deployment
	db        *pgx.Conn // the deployment's database, for checking
	instances []*service
	single    *service
	gateway   *service
}

// overrides are what the tests change of the study file: ttl and the read
// timeouts, and for rbac whatever a check adds.
func overrides(strategy, instances string, rbac map[string]string) deploytest.Options {
	limits := map[string]string{"READ_HEADER_TIMEOUT": readHeaderTimeout.String(), "READ_TIMEOUT": readTimeout.String()}
	env := map[string]string{"CACHE_TTL": ttl.String()}
	maps.Copy(env, limits)
	maps.Copy(env, rbac)
	return deploytest.Options{
		Variant: map[string]string{"strategy": strategy, "instances": instances},
		Env:     map[string]map[string]string{"rbac": env, "gateway": limits},
	}
}

// deploy starts a strategy's deployments from the study file and connects
// to the database of the first.
func deploy(ctx context.Context, t *testing.T, lab *deploytest.Lab, strategy string) *deployment {
	t.Helper()
	dep := lab.Start(ctx, t, overrides(strategy, "3", nil))
	conn, err := pgx.Connect(ctx, dep.Values()["dep.db.url"])
	if err != nil {
		t.Fatalf("%s: connect to its database: %v", strategy, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	d := &deployment{strategy: strategy, dep: dep, db: conn, instances: services(dep, "rbac"), gateway: services(dep, "gateway")[0]}
	if strategy != "db" {
		sf := lab.Start(ctx, t, overrides(strategy, "1", map[string]string{"SINGLEFLIGHT": "1"}))
		d.single = services(sf, "rbac")[0]
	}
	return d
}

// services lists the instances of a service of dep, in replica order.
func services(dep *runner.Deployment, name string) []*service {
	var out []*service
	for _, in := range dep.Instances(name) {
		out = append(out, &service{name: in.Name, addr: in.Addr, base: "http://" + in.Addr, logPath: in.Log})
	}
	return out
}

// readLog returns what s has logged so far.
func readLog(s *service) string {
	b, _ := os.ReadFile(s.logPath) // a missing log reads as empty: nothing logged
	return string(b)
}
