package apitest

import (
	"cmp"
	"context"
	"io"
	"maps"
	"net"
	"runtime"
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
	// The programs' own HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS, which
	// the gateway of the pipelined flood keeps (checkPipelined says why).
	defaultHeadersTimeout = 10 * time.Second
	defaultRequestTimeout = 30 * time.Second
	// callTimeout is the gateways' CALL_TIMEOUT_MS, the programs' default,
	// so that a hung call fails in seconds (the study's 9 s suits a load's
	// 10 s timeout, not a test). The amqp gateway of the broker restart
	// waits longer, brokerCallTimeout, so that requests confirmed before
	// the restart can be answered after it instead of timing out.
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
// program: the short HTTP limits, the services' cap on a call's deadline
// and the gateway's call timeout; then change's values, by service.
func variantOf(style string, change map[string]map[string]string) deploytest.Options {
	limits := map[string]string{"HEADERS_TIMEOUT_MS": ms(headersTimeout), "REQUEST_TIMEOUT_MS": ms(requestTimeout)}
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

// deployments are the test's deployments, by name: each style's with the
// short limits the hostile checks need, for most checks; and those for
// what these limits would cut short or a check changes besides.
var deployments = []struct {
	name, style string
	change      map[string]map[string]string
}{
	{"rest", "rest", nil},
	{"grpc", "grpc", nil},
	{"amqp", "amqp", nil},
	// A gateway with the programs' own HTTP limits, for the floods: 400
	// or 2,000 requests at once, whose headers a gateway busy with them
	// may not read within the short limit on a busy machine (a 408 in
	// place of a page); in grpc, a product service that keeps a
	// connection shortAge at most, for checkConnectionAge.
	{"rest-floods", "rest", ownLimits},
	{"grpc-floods", "grpc", with(ownLimits, "product", "MAX_CONNECTION_AGE_MS", ms(shortAge))},
	{"amqp-floods", "amqp", ownLimits},
	// A gateway that waits brokerCallTimeout, for the broker restart.
	{"amqp-broker", "amqp", map[string]map[string]string{"gateway": {"CALL_TIMEOUT_MS": ms(brokerCallTimeout)}}},
}

// ownLimits gives the gateway the programs' own HTTP limits.
var ownLimits = map[string]map[string]string{
	"gateway": {"HEADERS_TIMEOUT_MS": ms(defaultHeadersTimeout), "REQUEST_TIMEOUT_MS": ms(defaultRequestTimeout)},
}

// with is change with service's name set to value besides.
func with(change map[string]map[string]string, service, name, value string) map[string]map[string]string {
	out := maps.Clone(change)
	out[service] = map[string]string{name: value}
	return out
}

// deployAll starts every deployment of the test at once: one after
// another they took 12 to 18 s each on a busy machine, much of it waiting
// for a store, a broker or a program to be ready.
func deployAll(ctx context.Context, t *testing.T, lab *deploytest.Lab) map[string]*deployment {
	t.Helper()
	started := make([]*deployment, len(deployments))
	var wg sync.WaitGroup
	for i, spec := range deployments {
		wg.Go(func() {
			started[i] = deploy(ctx, aside{t}, lab, spec.name, spec.style, variantOf(spec.style, spec.change))
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	ds := map[string]*deployment{}
	for _, d := range started {
		ds[d.name] = d
	}
	return ds
}

// aside is t for a goroutine of the test's own: a fatal failure ends that
// goroutine, as t.Fatal cannot from there, and the test fails after it.
type aside struct{ testing.TB }

func (a aside) Fatal(args ...any) {
	a.TB.Helper()
	a.TB.Error(args...)
	runtime.Goexit()
}

func (a aside) Fatalf(format string, args ...any) {
	a.TB.Helper()
	a.TB.Errorf(format, args...)
	runtime.Goexit()
}

// deploy starts a style's variant of the study from the study file and
// connects to its stores.
func deploy(ctx context.Context, t testing.TB, lab *deploytest.Lab, name, style string, opts deploytest.Options) *deployment {
	t.Helper()
	began := time.Now()
	dep := lab.Start(ctx, t, opts)
	t.Logf("%s deployed in %s", name, time.Since(began).Round(time.Millisecond))
	values := dep.Values()
	d := &deployment{name: name, style: style, dep: dep, services: map[string]*program{}, broker: values["dep.broker.url"]}
	d.gateway = programOf(dep, style, "gateway")
	for _, name := range services {
		d.services[name] = programOf(dep, style, name)
	}
	d.stores = openStores(ctx, t, values["dep.mongo.url"], values["dep.mysql.dsn"])
	return d
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
