// Package deploytest starts a study's variants for tests, as httptest
// starts a server: from the study's own study.yaml, through the runner's
// own deployment code (runner.Lab), ready when Start returns and stopped
// at the test's cleanup.
//
// # Why
//
// An API test that starts the services its own way checks a system no run
// measures: change a command or an environment value in study.yaml and
// such a test still passes against the old one. Here the study file is
// the only description of what runs; a test states only what it changes
// of it (Options.Env: a shorter cache TTL, a short read timeout) and
// which variant it wants, and every module a run deploys (hosts,
// dependencies, forwards, links, services, accounting) comes up as the
// run brings it up. What a test reaches of a deployment is
// runner.Deployment's exported methods, the part of the Deployment of
// docs/backends.md that tests need, so a test will run unchanged on the
// next backend.
package deploytest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/study"
)

// Lab is a study built and ready to deploy its variants; tests that share
// one open it once.
type Lab struct {
	study *study.Study
	lab   *runner.Lab
}

// labs numbers the labs of a test binary, whose cgroups must not clash.
var labs atomic.Int64

// OpenOption changes what Open builds.
type OpenOption func(*runner.LabOptions)

// WithoutBuilds leaves builds of the study unbuilt, for a test that skips
// the variants whose toolchain the machine lacks (saying so) and tests
// the others; a variant that needs one fails to start.
func WithoutBuilds(names ...string) OpenOption {
	return func(o *runner.LabOptions) { o.WithoutBuilds = append(o.WithoutBuilds, names...) }
}

// Open loads the study file with a profile ("" for none), builds what its
// services need (through the repository's build cache, as msbench run
// does) and closes the lab at t's cleanup, after every deployment of it
// has stopped.
func Open(ctx context.Context, t testing.TB, file, profile string, opts ...OpenOption) *Lab {
	t.Helper()
	s, err := study.Load(file, profile)
	if err != nil {
		t.Fatal(err)
	}
	root, err := checkout.Root("")
	if err != nil {
		t.Fatal(err)
	}
	lo := runner.LabOptions{
		Root:     root,
		CacheDir: filepath.Join(root, ".cache", "builds"),
		DataDir:  filepath.Join(filepath.Dir(root), "shared", "data"),
		Name:     fmt.Sprintf("test-%d-%d", os.Getpid(), labs.Add(1)),
		Log:      logWriter{t},
	}
	for _, o := range opts {
		o(&lo)
	}
	l, err := runner.OpenLab(ctx, s, lo)
	if err != nil {
		t.Fatalf("open %s: %v", file, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close the lab of %s: %v", file, err)
		}
	})
	return &Lab{study: s, lab: l}
}

// Values are the placeholders every deployment of the lab shares: root,
// data, build.NAME, dataset.NAME, tokens.NAME.KEY; known before any
// deployment starts.
func (l *Lab) Values() map[string]string { return l.lab.Values() }

// Options choose a deployment's variant and what it changes of the study
// file.
type Options struct {
	// Variant gives axes their values; the first variant of the matrix
	// that has them is started, so an axis left out takes its first value.
	Variant map[string]string
	// Env sets environment variables of services, by service and name: a
	// value replaces the study file's (placeholders are expanded as
	// there), a name the file does not set is added.
	Env map[string]map[string]string
}

// Start deploys a variant of the study, waits until every service is
// ready, and stops it at t's cleanup. ctx bounds the start and, once
// cancelled, cuts the services' grace at stop short, as an interrupted
// run does.
func (l *Lab) Start(ctx context.Context, t testing.TB, opts Options) *runner.Deployment {
	t.Helper()
	return l.StartAll(ctx, t, opts)[0]
}

// StartAll deploys each of opts at once, as Start deploys one, and
// returns them in the order given once every one is ready; each is
// stopped at t's cleanup. Deployments spend most of their start waiting
// (a database's initialisation, readiness polls), so several started
// together take little longer than one. If any fails, t fails now, naming
// every failure, and those that started are stopped.
func (l *Lab) StartAll(ctx context.Context, t testing.TB, opts ...Options) []*runner.Deployment {
	t.Helper()
	type start struct {
		s      *study.Study
		v      study.Variant
		logDir string
		d      *runner.Deployment
		err    error
	}
	starts := make([]start, len(opts))
	for i, o := range opts {
		v, err := l.variant(o.Variant)
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.withEnv(o.Env)
		if err != nil {
			t.Fatal(err)
		}
		starts[i] = start{s: s, v: v, logDir: t.TempDir()}
	}
	var wg sync.WaitGroup
	for i := range starts {
		st := &starts[i]
		wg.Go(func() { st.d, st.err = l.lab.Deploy(ctx, st.s, st.v, st.logDir) })
	}
	wg.Wait()
	var errs []error
	out := make([]*runner.Deployment, len(starts))
	for i, st := range starts {
		if st.err != nil {
			errs = append(errs, fmt.Errorf("deploy %s of %s: %w", st.v.Key(), st.s.Name, st.err))
			continue
		}
		out[i] = st.d
		t.Cleanup(func() {
			if err := st.d.Stop(); err != nil {
				t.Errorf("stop %s of %s: %v", st.v.Key(), st.s.Name, err)
			}
		})
	}
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	return out
}

// StopCleanly stops d now and fails t for every instance of a service
// that did not end by itself, cleanly, within the grace after SIGTERM, as
// a study's services promise to; the tail of its log says why. Clean is
// status 0, or 143 (128+SIGTERM), with which the JVM ends after running
// its shutdown hooks, and which no service can change short of halting
// the JVM itself. It returns how each ended, for a test to say more.
func StopCleanly(t testing.TB, d *runner.Deployment, opts ...StopOption) []runner.Exit {
	t.Helper()
	var o stopOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	exits := d.Exits()
	for _, e := range exits {
		switch {
		case e.Killed:
			t.Errorf("%s still ran after SIGTERM and its grace, and was killed; log:\n%s", e.Instance, proc.LogTail(e.Log, 20))
		case !o.clean(e.Err):
			t.Errorf("%s ended %v after SIGTERM with %v; log:\n%s", e.Instance, e.After.Round(time.Millisecond), e.Err, proc.LogTail(e.Log, 20))
		}
	}
	return exits
}

// StopOption widens what StopCleanly takes as a clean end.
type StopOption func(*stopOptions)

type stopOptions struct{ diesBySIGTERM bool }

// DiesBySIGTERM also takes death by SIGTERM itself as clean, for runtimes
// that raise the signal again once their own shutdown is done (Node under
// NestJS's enableShutdownHooks), so that the exit status cannot tell a
// graceful shutdown from none. A service that dies of SIGTERM at once
// passes too: use it only where the runtime leaves no other way.
func DiesBySIGTERM() StopOption { return func(o *stopOptions) { o.diesBySIGTERM = true } }

func (o stopOptions) clean(err error) bool {
	var ee *exec.ExitError
	if err == nil {
		return true
	}
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return false
	case ws.Exited():
		return ws.ExitStatus() == 128+int(syscall.SIGTERM)
	default:
		return o.diesBySIGTERM && ws.Signaled() && ws.Signal() == syscall.SIGTERM
	}
}

// variant is the first of the matrix with the values asked.
func (l *Lab) variant(want map[string]string) (study.Variant, error) {
	for _, v := range l.study.Matrix() {
		if has(v, want) {
			return v, nil
		}
	}
	return study.Variant{}, fmt.Errorf("no variant of study %s has %v", l.study.Name, want)
}

func has(v study.Variant, values map[string]string) bool {
	for axis, value := range values {
		if v.Get(axis) != value {
			return false
		}
	}
	return true
}

// withEnv is the study with env's values set; the study itself, shared by
// the lab's deployments, is left as it is.
func (l *Lab) withEnv(env map[string]map[string]string) (*study.Study, error) {
	if len(env) == 0 {
		return l.study, nil
	}
	s := *l.study
	s.Services = slices.Clone(s.Services)
	for _, name := range slices.Sorted(maps.Keys(env)) {
		i := slices.IndexFunc(s.Services, func(svc *study.Service) bool { return svc.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("env of %s: study %s has no such service", name, s.Name)
		}
		svc := *s.Services[i]
		svc.Env = slices.Clone(svc.Env)
		for _, k := range slices.Sorted(maps.Keys(env[name])) {
			kv := [2]string{k, env[name][k]}
			if j := slices.IndexFunc(svc.Env, func(e [2]string) bool { return e[0] == k }); j >= 0 {
				svc.Env[j] = kv
			} else {
				svc.Env = append(svc.Env, kv)
			}
		}
		s.Services[i] = &svc
	}
	return &s, nil
}

// logWriter shows the lab's progress (builds, starts) in the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
