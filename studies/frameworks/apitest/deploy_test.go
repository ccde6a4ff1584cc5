package apitest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/proc"
)

const (
	// stopGrace is how long a program may take after SIGTERM: "a few
	// seconds". One that needs SIGKILL fails the test.
	stopGrace = 5 * time.Second
	// readHeaderTimeout and readTimeout are the gateways' READ_HEADER_TIMEOUT
	// and READ_TIMEOUT, short so the hostile requests end quickly.
	readHeaderTimeout = time.Second
	readTimeout       = 2 * time.Second
	// maxBody is the request body every gateway refuses beyond (100 KiB).
	maxBody = 100 << 10
	// microMaxRequest is the largest request, header and body, a Micro
	// service reads (platform.MaxRequest in services/micro).
	microMaxRequest = 64 << 10
)

// limits are the gateways' limits, as the hostile requests test them.
var limits = hostile.Limits{ReadHeader: readHeaderTimeout, Read: readTimeout, MaxBody: maxBody}

// framework is one system under test as its services/NAME/build.sh and
// OUT/run.sh PROGRAM make and start it.
type framework struct {
	name string
	// addrs are the variables naming the programs' addresses besides the
	// gateway's ADDR; each gets a free loopback port.
	addrs []string
	// stages start in order; the programs of a stage start together and
	// must all pass their checks before the next stage starts.
	stages [][]program
	// load is UNIVERSITIES_LOAD when the variable is not set.
	load string
	// bothLoads: deploy it with the other UNIVERSITIES_LOAD as well.
	bothLoads bool
	// readyTimeout bounds the start, up to the gateway's /ready.
	readyTimeout time.Duration
	env          []string
	// hostile adapts the standard hostile requests to what the framework's
	// HTTP server does and cannot be configured out of.
	hostile func([]hostile.Case) []hostile.Case
	// backends are the programs behind the gateway that serve HTTP; the
	// hostile requests go to them too, made for their limits and adapted
	// by backendHostile.
	backends       []backend
	backendLimits  hostile.Limits
	backendHostile func([]hostile.Case) []hostile.Case
	// needs are the programs the build and the run need; without one the
	// framework is skipped, saying so.
	needs []string
	// skip, when set, gives a reason to skip the framework ("" for none).
	skip func() string
}

// program is one of a deployment's programs, started as run.sh NAME; ready
// is the check it must pass (given its address variables' values), nil for
// none: the gateway's /ready covers it.
type program struct {
	name  string
	ready func(addr map[string]string) proc.Check
}

// backend is a program behind the gateway that serves HTTP: at the address
// in the variable addr, a request of method and path with header (and
// Content-Type: application/json) and body answers 200; the hostile
// requests start the same way.
type backend struct {
	name, addr   string
	method, path string
	header       [][2]string
	body         string
}

// deployment is a framework's programs, started, on their own ports.
type deployment struct {
	fw      framework
	load    string // the UNIVERSITIES_LOAD in force
	dataset string // the deployment's own copy of the dataset
	addr    map[string]string
	base    string // http://ADDR, the gateway
	procs   []*proc.Process
}

// build runs services/NAME/build.sh into a directory of the test's.
func build(ctx context.Context, t *testing.T, fw framework) string {
	t.Helper()
	for _, tool := range fw.needs {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping %s: %s is not installed", fw.name, tool)
		}
	}
	out := t.TempDir()
	began := time.Now()
	cmd := exec.CommandContext(ctx, "./build.sh", out)
	cmd.Dir = filepath.Join("..", "services", fw.name)
	// A build's compilers must not outlive a cancelled test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s/build.sh: %v\n%s", fw.name, err, b)
	}
	t.Logf("%s/build.sh took %s", fw.name, time.Since(began).Round(time.Millisecond))
	return out
}

// deploy starts fw's programs from out, stage by stage, with UNIVERSITIES_LOAD
// set to load ("" leaves it unset), and waits until the gateway's /ready
// answers 200. Everything is stopped when the test ends, in the reverse
// order.
func deploy(ctx context.Context, t *testing.T, fw framework, out, load string, data dataset, ports *proc.PortAllocator) *deployment {
	t.Helper()
	d := &deployment{fw: fw, load: load, dataset: data.copyTo(t), addr: map[string]string{}}
	if load == "" {
		d.load = fw.load
	}
	// The JVM programs' Tomcat work directories go to TMPDIR (run.sh), so
	// none is left in /tmp.
	env := slices.Concat(fw.env, []string{
		"TMPDIR=" + t.TempDir(),
		"UNIVERSITIES_FILE=" + d.dataset,
		"JWT_SECRET=" + secret,
		"JWT_AUDIENCE=" + audience,
		"READ_HEADER_TIMEOUT=" + readHeaderTimeout.String(),
		"READ_TIMEOUT=" + readTimeout.String(),
	})
	if load != "" {
		env = append(env, "UNIVERSITIES_LOAD="+load)
	}
	for _, name := range append([]string{"ADDR"}, fw.addrs...) {
		port, err := ports.Next()
		if err != nil {
			t.Fatal(err)
		}
		d.addr[name] = "127.0.0.1:" + strconv.Itoa(port)
		env = append(env, name+"="+d.addr[name])
	}
	d.base = "http://" + d.addr["ADDR"]

	logs := t.TempDir()
	began := time.Now()
	for _, stage := range fw.stages {
		var started []*proc.Process
		for _, prog := range stage {
			p, err := proc.Start(ctx, proc.Spec{
				Name:    fw.name + "-" + prog.name,
				Path:    filepath.Join(out, "run.sh"),
				Args:    []string{prog.name},
				Env:     env,
				LogPath: filepath.Join(logs, prog.name+".log"),
			})
			if err != nil {
				t.Fatalf("start %s %s: %v", fw.name, prog.name, err)
			}
			t.Cleanup(func() { stop(t, p) })
			d.procs = append(d.procs, p)
			started = append(started, p)
		}
		for i, prog := range stage {
			if prog.ready == nil {
				continue
			}
			if err := proc.WaitReady(ctx, started[i], prog.ready(d.addr), time.Until(began.Add(fw.readyTimeout))); err != nil {
				t.Fatalf("%s not ready: %v", started[i].Name(), err)
			}
			t.Logf("%s ready after %s", started[i].Name(), time.Since(began).Round(time.Millisecond))
		}
	}
	gateway := d.procs[len(d.procs)-1]
	if err := proc.WaitReady(ctx, gateway, proc.HTTPCheck{URL: d.base + "/ready"}, time.Until(began.Add(fw.readyTimeout))); err != nil {
		t.Fatalf("%s (UNIVERSITIES_LOAD=%s) not ready: %v", fw.name, d.load, err)
	}
	t.Logf("%s (UNIVERSITIES_LOAD=%s) ready after %s", fw.name, d.load, time.Since(began).Round(time.Millisecond))
	return d
}

// stop ends p as the lab does: SIGTERM, and SIGKILL only after stopGrace,
// which fails the test.
func stop(t *testing.T, p *proc.Process) {
	began := time.Now()
	if err := p.Stop(context.Background(), stopGrace); err != nil {
		t.Errorf("stop %s: %v", p.Name(), err)
	}
	var ee *exec.ExitError
	if errors.As(p.ExitErr(), &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			t.Errorf("%s: still running %v after SIGTERM, had to be killed; log:\n%s", p.Name(), stopGrace, proc.LogTail(p.LogPath(), 20))
			return
		}
	}
	t.Logf("%s stopped %s after SIGTERM", p.Name(), time.Since(began).Round(time.Millisecond))
}

// haveJDK25 reports whether jdk.sh will find the JDK the Spring programs
// run on.
func haveJDK25() bool {
	dirs, _ := filepath.Glob("/usr/lib/jvm/*25*")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "bin", "java")); err == nil {
			return true
		}
	}
	return false
}
