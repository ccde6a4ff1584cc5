package apitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/proc"
)

const (
	readyTimeout = 60 * time.Second
	// harnessKill is when the lab kills a program still there after
	// SIGTERM; the programs promise to be gone within 1.5 s.
	harnessKill = 2 * time.Second
	// The programs' HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS, short so
	// that the hostile cases end quickly, and their default MAX_BODY_BYTES.
	headersTimeout = time.Second
	requestTimeout = 2 * time.Second
	maxBody        = 16384
	// callTimeout is the rest and grpc gateways' CALL_TIMEOUT_MS, the
	// default. The amqp gateway waits longer, brokerCallTimeout, so that
	// requests confirmed before a broker restart can be answered after it
	// instead of timing out.
	callTimeout       = 3 * time.Second
	brokerCallTimeout = 30 * time.Second
)

var (
	styles   = []string{"rest", "grpc", "amqp"}
	services = []string{"product", "reviews", "recommendations", "shipping", "cart"}
)

// program is one started service or gateway.
type program struct {
	name, style string
	addr        string
	base        string // http://addr, for the programs that serve HTTP
	env         []string
	script      string
	logPath     string
	proc        *proc.Process
}

func (p *program) servesHTTP() bool { return p.name == "gateway" || p.style != "grpc" }

func (p *program) log() string { return proc.LogTail(p.logPath, 30) }

// fleet is every program the test started; it stops them all at the end,
// at once, each with a request in flight, and checks that each exits by
// itself within the harness's grace.
type fleet struct {
	mu    sync.Mutex
	procs []*program
}

// deployment is one style's six programs.
type deployment struct {
	style    string
	services map[string]*program
	gateway  *program
}

// build runs build.sh into a fresh directory, as a study run does.
func build(ctx context.Context, t *testing.T) string {
	t.Helper()
	began := time.Now()
	out := filepath.Join(t.TempDir(), "ipc")
	cmd := exec.CommandContext(ctx, "bash", "../services/build.sh", out)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, output)
	}
	t.Logf("built in %s", time.Since(began).Round(time.Millisecond))
	return out
}

// deploy starts every style's services and gateways at once, so that the
// services of the three styles seed the same empty stores together, and
// waits until all are ready.
func deploy(ctx context.Context, t *testing.T, f *fleet, out string, ports *proc.PortAllocator, mongo, maria, rabbit *deps.Instance) map[string]*deployment {
	t.Helper()
	began := time.Now()
	stores := []string{
		"MONGO_URL=" + mongo.URL, "MYSQL_URL=" + maria.URL, "AMQP_URL=" + rabbit.URL,
		fmt.Sprintf("DEADLINE_MAX_MS=%d", deadlineMax.Milliseconds()),
	}
	ds := map[string]*deployment{}
	var all []*program
	for _, style := range styles {
		d := &deployment{style: style, services: map[string]*program{}}
		var addrs []string
		for _, name := range services {
			p := f.launch(ctx, t, out, ports, style, name, stores)
			d.services[name] = p
			addrs = append(addrs, strings.ToUpper(name)+"_ADDR="+p.addr)
			all = append(all, p)
		}
		timeout := callTimeout
		if style == "amqp" {
			timeout = brokerCallTimeout
		}
		env := append(addrs, "AMQP_URL="+rabbit.URL, fmt.Sprintf("CALL_TIMEOUT_MS=%d", timeout.Milliseconds()))
		d.gateway = f.launch(ctx, t, out, ports, style, "gateway", env)
		all = append(all, d.gateway)
		ds[style] = d
	}
	for _, p := range all {
		waitReady(ctx, t, p)
	}
	t.Logf("18 programs ready in %s", time.Since(began).Round(time.Millisecond))
	return ds
}

// launch starts a program on a port of its own; it does not wait for it.
func (f *fleet) launch(ctx context.Context, t *testing.T, out string, ports *proc.PortAllocator, style, name string, env []string) *program {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := &program{
		name: name, style: style, addr: addr, base: "http://" + addr,
		env: slices.Concat([]string{
			"STYLE=" + style, "ADDR=" + addr,
			fmt.Sprintf("HEADERS_TIMEOUT_MS=%d", headersTimeout.Milliseconds()),
			fmt.Sprintf("REQUEST_TIMEOUT_MS=%d", requestTimeout.Milliseconds()),
		}, env),
		script:  filepath.Join(out, "src", name+".js"),
		logPath: filepath.Join(t.TempDir(), style+"-"+name+".log"),
	}
	f.start(ctx, t, p)
	return p
}

// start (re)starts p with its address and environment.
func (f *fleet) start(ctx context.Context, t *testing.T, p *program) {
	t.Helper()
	var err error
	p.proc, err = proc.Start(ctx, proc.Spec{Name: p.style + "-" + p.name, Path: "node", Args: []string{p.script}, Env: p.env, LogPath: p.logPath})
	if err != nil {
		t.Fatalf("start %s %s: %v", p.style, p.name, err)
	}
	f.mu.Lock()
	f.procs = append(f.procs, &program{name: p.name, style: p.style, addr: p.addr, proc: p.proc, logPath: p.logPath})
	f.mu.Unlock()
}

// waitReady waits until p answers: a gRPC service accepts a connection,
// which it does only once ready; the others answer GET /healthz.
func waitReady(ctx context.Context, t *testing.T, p *program) {
	t.Helper()
	var check proc.Check = proc.HTTPCheck{URL: p.base + "/healthz"}
	if !p.servesHTTP() {
		check = proc.TCPCheck{Addr: p.addr}
	}
	if err := proc.WaitReady(ctx, p.proc, check, readyTimeout); err != nil {
		t.Fatalf("%s %s not ready: %v\n%s", p.style, p.name, err, p.log())
	}
}

// stopAll stops every program still running, all at once, each with a
// request whose body never comes in flight if it serves HTTP: each must
// exit by itself, cleanly, within the harness's grace.
func (f *fleet) stopAll(t *testing.T) {
	f.mu.Lock()
	procs := f.procs
	f.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	took := make([]time.Duration, len(procs))
	for i, p := range procs {
		select {
		case <-p.proc.Done():
			continue // killed by a fault on purpose
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			took[i], errs[i] = stopChecked(p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	slowest := slices.Index(took, slices.Max(took))
	t.Logf("every program stopped on SIGTERM, the slowest, %s %s, after %v", procs[slowest].style, procs[slowest].name, took[slowest].Round(time.Millisecond))
}

func stopChecked(p *program) (time.Duration, error) {
	if p.style != "grpc" || p.name == "gateway" {
		defer requestInFlight(p.addr)()
	}
	began := time.Now()
	if err := p.proc.Stop(context.Background(), harnessKill); err != nil {
		return 0, err
	}
	took := time.Since(began)
	var ee *exec.ExitError
	switch {
	case errors.As(p.proc.ExitErr(), &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		return took, fmt.Errorf("%s %s still ran %v after SIGTERM and was killed; log:\n%s", p.style, p.name, harnessKill, p.log())
	case p.proc.ExitErr() != nil:
		return took, fmt.Errorf("%s %s exited with %v %v after SIGTERM; log:\n%s", p.style, p.name, p.proc.ExitErr(), took, p.log())
	}
	return took, nil
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
