package apitest

import (
	"cmp"
	"context"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
)

// What the checks change of the study file (every other value, command and
// address is the study's own).
const (
	// The programs' HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS, short so
	// that the hostile cases end quickly, and their default MAX_BODY_BYTES.
	headersTimeout = time.Second
	requestTimeout = 2 * time.Second
	maxBody        = 16384
	// The programs' HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS where a
	// check floods a gateway with 400 or 2,000 requests at once: a program
	// busy with them may not read a request's headers for seconds on a
	// busy machine, and must not cut it (a 408 in place of a page; the
	// programs' own 10 s did once, and 1 s often), nor a call of the
	// gateway's.
	floodHeadersTimeout = time.Minute
	floodRequestTimeout = 2 * time.Minute
	// callTimeout is the gateways' CALL_TIMEOUT_MS, the programs' default,
	// so that a hung call fails in seconds (the study's 9 s suits a load's
	// 10 s timeout, not a test). The amqp gateway of the broker restart
	// waits longer, brokerCallTimeout, so that requests confirmed before
	// the restart can be answered after it instead of timing out, and the
	// amqp checks that need a hung call to fail go to amqp-floods.
	callTimeout       = 3 * time.Second
	brokerCallTimeout = 30 * time.Second
)

var (
	styles   = []string{"rest", "grpc", "amqp"}
	services = []string{"product", "reviews", "recommendations", "shipping", "cart"}
)

// program is one service or gateway of a deployment, as the checks
// address it.
type program struct {
	name, style string
	addr        string
	base        string // http://addr, for the programs that serve HTTP
	logPath     string
}

func (p *program) servesHTTP() bool { return p.name == "gateway" || p.style != "grpc" }

func (p *program) log() string { return proc.LogTail(p.logPath, 30) }

// deployment is one style's variant of the study: its six programs on a
// FerretDB, MariaDB and RabbitMQ of its own.
type deployment struct {
	name     string // the style, and what it is for if not the style's first
	style    string
	dep      *runner.Deployment
	services map[string]*program
	gateway  *program
	stores   *stores
	broker   string // its RabbitMQ's URL
}

// programs are the deployment's services and its gateway.
func (d *deployment) programs() []*program {
	return append([]*program{d.gateway}, valuesOf(d.services)...)
}

// valuesOf are m's programs in the order of services.
func valuesOf(m map[string]*program) []*program {
	var ps []*program
	for _, name := range services {
		ps = append(ps, m[name])
	}
	return ps
}

// variantOf is a style's variant with what the checks change of every
// program: its HTTP limits, the services' cap on a call's deadline and
// the gateway's call timeout; then change's values, by service.
func variantOf(style string, limits map[string]string, change map[string]map[string]string) deploytest.Options {
	env := map[string]map[string]string{"gateway": {"CALL_TIMEOUT_MS": ms(callTimeout)}}
	for _, name := range services {
		env[name] = map[string]string{"DEADLINE_MAX_MS": ms(deadlineMax)}
	}
	for name, values := range env {
		maps.Copy(values, limits)
		maps.Copy(values, change[name])
	}
	return deploytest.Options{Variant: map[string]string{"style": style}, Env: env}
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// The programs' HTTP limits: short for the hostile clients' checks, long
// for the floods (floodHeadersTimeout says why).
var (
	shortLimits = map[string]string{"HEADERS_TIMEOUT_MS": ms(headersTimeout), "REQUEST_TIMEOUT_MS": ms(requestTimeout)}
	floodLimits = map[string]string{"HEADERS_TIMEOUT_MS": ms(floodHeadersTimeout), "REQUEST_TIMEOUT_MS": ms(floodRequestTimeout)}
)

// deployments are the test's deployments, by name. A style's own has the
// short limits, for most checks; in amqp its gateway waits
// brokerCallTimeout, for the broker restart. A style's "-floods" one has
// the long limits, for the floods, and serves what its style's own cannot:
// in amqp a gateway that times out as the others do (the service hung),
// in grpc a product service that keeps a connection shortAge at most
// (checkConnectionAge).
var deployments = []struct {
	name, style string
	limits      map[string]string
	change      map[string]map[string]string
}{
	{"rest", "rest", shortLimits, nil},
	{"grpc", "grpc", shortLimits, nil},
	{"amqp", "amqp", shortLimits, map[string]map[string]string{"gateway": {"CALL_TIMEOUT_MS": ms(brokerCallTimeout)}}},
	{"rest-floods", "rest", floodLimits, nil},
	{"grpc-floods", "grpc", floodLimits, map[string]map[string]string{"product": {"MAX_CONNECTION_AGE_MS": ms(shortAge)}}},
	{"amqp-floods", "amqp", floodLimits, nil},
}

// deployAll starts every deployment of the test at once, and connects to
// each one's stores.
func deployAll(ctx context.Context, t *testing.T, lab *deploytest.Lab) map[string]*deployment {
	t.Helper()
	opts := make([]deploytest.Options, len(deployments))
	for i, spec := range deployments {
		opts[i] = variantOf(spec.style, spec.limits, spec.change)
	}
	began := time.Now()
	started := lab.StartAll(ctx, t, opts...)
	t.Logf("%d deployments ready in %s", len(started), time.Since(began).Round(time.Millisecond))
	ds := map[string]*deployment{}
	for i, spec := range deployments {
		dep := started[i]
		values := dep.Values()
		d := &deployment{name: spec.name, style: spec.style, dep: dep, services: map[string]*program{}, broker: values["dep.broker.url"]}
		d.gateway = programOf(dep, spec.style, "gateway")
		for _, name := range services {
			d.services[name] = programOf(dep, spec.style, name)
		}
		d.stores = openStores(ctx, t, values["dep.mongo.url"], values["dep.mysql.dsn"])
		ds[spec.name] = d
	}
	return ds
}

// pause pauses (SIGSTOP) the services and dependencies of d named, and
// returns what resumes them, once however often it is called.
func (d *deployment) pause(t *testing.T, names ...string) (resume func()) {
	t.Helper()
	var paused []string
	resume = sync.OnceFunc(func() {
		for _, name := range paused {
			if err := d.dep.Resume(name); err != nil {
				t.Error(err)
			}
		}
	})
	for _, name := range names {
		if err := d.dep.Pause(name); err != nil {
			resume()
			t.Fatal(err)
		}
		paused = append(paused, name)
	}
	return resume
}

func programOf(dep *runner.Deployment, style, name string) *program {
	in := dep.Instances(name)[0]
	return &program{name: name, style: style, addr: in.Addr, base: "http://" + in.Addr, logPath: in.Log}
}

// stopCleanly stops every deployment at once, each with a request whose
// body never comes in flight at every program that serves HTTP: each
// program must exit by itself, cleanly, within the lab's grace.
func stopCleanly(t *testing.T, all map[string]*deployment) {
	var wg sync.WaitGroup
	ds := slices.Collect(maps.Values(all))
	exits := make([][]runner.Exit, len(ds))
	for i, d := range ds {
		d.stores.close()
		for _, p := range d.programs() {
			if p.servesHTTP() {
				defer requestInFlight(p.addr)()
			}
		}
		wg.Go(func() { exits[i] = deploytest.StopCleanly(named{t, d.name}, d.dep) })
	}
	wg.Wait()
	for i, d := range ds {
		if len(exits[i]) == 0 {
			t.Errorf("%s: no program was stopped", d.name)
			continue
		}
		slowest := slices.MaxFunc(exits[i], func(a, b runner.Exit) int { return cmp.Compare(a.After, b.After) })
		t.Logf("%s: %d programs stopped on SIGTERM, the slowest, %s, after %v", d.name, len(exits[i]), slowest.Instance, slowest.After.Round(time.Millisecond))
	}
}

// named says which deployment a failure is of.
type named struct {
	testing.TB
	name string
}

func (n named) Errorf(format string, args ...any) {
	n.TB.Helper()
	n.TB.Errorf(n.name+": "+format, args...)
}

// requestInFlight starts a request whose body trickles in and never ends;
// the returned func closes its connection.
func requestInFlight(addr string) func() {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return func() {}
	}
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: ipc.test\r\nContent-Length: 1000\r\n\r\n{")
	time.Sleep(100 * time.Millisecond) // for the server to read the headers
	return func() { conn.Close() }
}
