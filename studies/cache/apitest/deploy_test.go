package apitest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/deps/depstest"
	"github.com/msbench/msbench/internal/proc"
)

const (
	// ttl is the services' CACHE_TTL: short, so that staleness ends within
	// the test, and long enough to tell an expiry from an invalidation.
	ttl          = 5 * time.Second
	readyTimeout = 30 * time.Second
	stopGrace    = 5 * time.Second
	// The services' READ_HEADER_TIMEOUT and READ_TIMEOUT, short so the
	// hostile cases end quickly.
	readHeaderTimeout = time.Second
	readTimeout       = 2 * time.Second
)

var limitsEnv = []string{"READ_HEADER_TIMEOUT=" + readHeaderTimeout.String(), "READ_TIMEOUT=" + readTimeout.String()}

var strategies = []string{"db", "redis", "inproc", "inproc-pubsub"}

// service is one started program.
type service struct {
	name    string
	addr    string
	base    string // http://addr
	logPath string
	proc    *proc.Process
}

// deployment is one strategy's system under test: instances a, b and c
// behind a gateway, as in the paper, and for a caching strategy a fourth
// instance "sf" with SINGLEFLIGHT=1, outside the gateway, for the stampede.
type deployment struct {
	strategy  string
	env       []string  // the rbac instances'
	db        *pgx.Conn // the deployment's own database, for checking
	instances []*service
	single    *service
	gateway   *service
}

type binaries struct{ rbac, gateway string }

// build compiles both programs of ../cache, which is a module of its own.
func build(ctx context.Context, t *testing.T) binaries {
	t.Helper()
	began := time.Now()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "./rbac", "./gateway")
	cmd.Dir = "../services"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in ../cache: %v\n%s", err, out)
	}
	t.Logf("built rbac and gateway in %s", time.Since(began).Round(time.Millisecond))
	return binaries{rbac: filepath.Join(dir, "rbac"), gateway: filepath.Join(dir, "gateway")}
}

// deploy starts a strategy's deployment on a database of its own. The rbac
// instances start together, as a deployment's do, so they set up the same
// empty database at once.
func deploy(ctx context.Context, t *testing.T, bins binaries, pg, rd *deps.Instance,
	strategy string, ports *proc.PortAllocator) *deployment {
	t.Helper()
	dbURL, conn := depstest.CreateDatabase(ctx, t, pg, "rbac_"+strings.ReplaceAll(strategy, "-", "_"))
	env := []string{
		"DATABASE_URL=" + dbURL, "REDIS_URL=" + rd.URL, "STRATEGY=" + strategy, "CACHE_TTL=" + ttl.String(),
		// As the paper ran Go, and the study does.
		"GOMAXPROCS=1", "GOMEMLIMIT=256MiB",
	}
	env = append(env, limitsEnv...)
	d := &deployment{strategy: strategy, env: env, db: conn}
	for _, name := range []string{"a", "b", "c"} {
		d.instances = append(d.instances, launch(ctx, t, strategy, name, bins.rbac, ports, env, "INSTANCE="+name))
	}
	starting := d.instances
	if strategy != "db" {
		d.single = launch(ctx, t, strategy, "sf", bins.rbac, ports, env, "INSTANCE=sf", "SINGLEFLIGHT=1")
		starting = append(slices.Clone(starting), d.single)
	}
	for _, s := range starting {
		waitReady(ctx, t, s)
	}
	var upstreams []string
	for _, s := range d.instances {
		upstreams = append(upstreams, s.addr)
	}
	d.gateway = launch(ctx, t, strategy, "gateway", bins.gateway, ports, limitsEnv, "UPSTREAMS="+strings.Join(upstreams, ","))
	waitReady(ctx, t, d.gateway)
	return d
}

// launch starts a program on a port of its own and stops it when the test
// ends; it does not wait for it.
func launch(ctx context.Context, t *testing.T, strategy, name, bin string, ports *proc.PortAllocator,
	env []string, extra ...string) *service {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &service{name: name, addr: addr, base: "http://" + addr, logPath: filepath.Join(t.TempDir(), name+".log")}
	s.proc, err = proc.Start(ctx, proc.Spec{
		Name:    strategy + "-" + name,
		Path:    bin,
		Env:     slices.Concat(env, extra, []string{"ADDR=" + addr}),
		LogPath: s.logPath,
	})
	if err != nil {
		t.Fatalf("start %s %s: %v", strategy, name, err)
	}
	t.Cleanup(func() {
		if err := s.proc.Stop(context.Background(), stopGrace); err != nil {
			t.Errorf("stop %s %s: %v", strategy, name, err)
		}
	})
	return s
}

func waitReady(ctx context.Context, t *testing.T, s *service) {
	t.Helper()
	if err := proc.WaitReady(ctx, s.proc, proc.HTTPCheck{URL: s.base + "/healthz"}, readyTimeout); err != nil {
		t.Fatalf("%s not ready: %v", s.proc.Name(), err)
	}
}

// readLog returns what s has logged so far.
func readLog(s *service) string {
	b, _ := os.ReadFile(s.logPath) // a missing log reads as empty: nothing logged
	return string(b)
}

// stopServer stops a dependency's server the way an outage does, behind
// the instance's back; Restart brings it back. sig asks for a fast
// shutdown: Postgres's SIGTERM would wait for the pools to disconnect.
func stopServer(t *testing.T, in *deps.Instance, sig syscall.Signal) {
	t.Helper()
	p := in.Processes()[0]
	if err := p.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.Name(), err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still runs 10 s after %v", p.Name(), sig)
	}
}
