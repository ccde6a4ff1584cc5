package deploytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/proctest"
	"github.com/msbench/msbench/internal/study"
)

// TestMain fails the run if a deployment outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }

const tiny = "../testdata/tiny.yaml"

func TestVariantIsTheFirstWithTheValuesAsked(t *testing.T) {
	s, err := study.Load(tiny, "")
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{study: s}
	for _, c := range []struct {
		name string
		want map[string]string
		key  string // "" when no variant has the values
	}{
		{"none asked", nil, "0"},
		{"one axis", map[string]string{"crash": "30"}, "30"},
		{"no such value", map[string]string{"crash": "7"}, ""},
		{"no such axis", map[string]string{"flavour": "0"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := l.variant(c.want)
			switch {
			case c.key == "" && err == nil:
				t.Fatalf("variant %s for %v, want an error", v.Key(), c.want)
			case c.key != "" && (err != nil || v.Key() != c.key):
				t.Fatalf("variant %s (%v), want %s", v.Key(), err, c.key)
			}
		})
	}
}

func TestEnvOverridesACopy(t *testing.T) {
	s, err := study.Load(tiny, "")
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{study: s}
	before := slices.Clone(s.Service("front").Env)
	got, err := l.withEnv(map[string]map[string]string{"front": {"CRASH_AFTER": "1", "EXTRA": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(before)
	want[slices.IndexFunc(want, func(kv [2]string) bool { return kv[0] == "CRASH_AFTER" })][1] = "1"
	want = append(want, [2]string{"EXTRA", "x"})
	if env := got.Service("front").Env; !slices.Equal(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	if env := s.Service("front").Env; !slices.Equal(env, before) {
		t.Errorf("the lab's study changed: %v, was %v", env, before)
	}
	if got.Service("backend") != s.Service("backend") {
		t.Error("a service without overrides was copied")
	}
	if _, err := l.withEnv(map[string]map[string]string{"nope": {"A": "b"}}); err == nil {
		t.Error("env of a service the study lacks: no error")
	}
}

func hello(t *testing.T, addr string) (int, string, error) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/hello")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// openTiny opens the tiny study's lab for a test that starts services.
func openTiny(t *testing.T) (context.Context, *Lab) {
	if testing.Short() {
		t.Skip("builds and starts services")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx, Open(ctx, t, tiny, "")
}

// The harness starts what the study file says, with the test's overrides,
// and reaches it through the Deployment's methods only.
func TestStartDeploysTheStudyFile(t *testing.T) {
	ctx, lab := openTiny(t)

	d := lab.Start(ctx, t, Options{})
	front := d.Addr("front")
	if status, body, err := hello(t, front); err != nil || status != http.StatusOK || body != "front+hello" {
		t.Fatalf("front answered %d %q %v, want the study's front calling its backend", status, body, err)
	}
	backend := d.Instances("backend")
	if len(backend) != 1 || d.Values()["service.backend.addr"] != backend[0].Addr || backend[0].Log == "" {
		t.Fatalf("backend instances %+v, values %v", backend, d.Values())
	}
	front0 := d.Instances("front")[0]
	if log, err := os.ReadFile(front0.Log); err != nil || front0.Tmp == "" || !strings.Contains(string(log), "TMPDIR "+front0.Tmp+"\n") {
		t.Errorf("front's Tmp %q is not the TMPDIR its log names (%v):\n%s", front0.Tmp, err, log)
	}
	if err := d.ResetPeak("front"); err != nil {
		t.Fatal(err)
	}
	if u, err := d.Usage("front"); err != nil || u.CPUSec() <= 0 || u.CurrentMemBytes <= 0 || u.PeakMemBytes < u.CurrentMemBytes {
		t.Errorf("front's usage %+v (%v): want CPU spent and memory in use, the peak at least what is used now", u, err)
	}
	if _, err := d.Usage("nope"); err == nil {
		t.Error("usage of no instance: no error")
	}
	if err := d.Kill("backend"); err != nil {
		t.Fatal(err)
	}
	if status, _, err := hello(t, front); err != nil || status != http.StatusBadGateway {
		t.Fatalf("front with its backend killed answered %d %v, want 502", status, err)
	}
	if err := d.Restart(ctx, "backend"); err != nil {
		t.Fatal(err)
	}
	if status, _, err := hello(t, front); err != nil || status != http.StatusOK {
		t.Fatalf("front with its backend restarted answered %d %v", status, err)
	}
	// Paused, the backend takes requests it does not answer; resumed, it
	// answers them.
	if err := d.Pause("backend"); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 300 * time.Millisecond}
	if resp, err := c.Get("http://" + backend[0].Addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("paused backend answered %d", resp.StatusCode)
	}
	if err := d.Resume("backend"); err != nil {
		t.Fatal(err)
	}
	if status, _, err := hello(t, backend[0].Addr); err != nil || status != http.StatusOK {
		t.Fatalf("resumed backend answered %d %v", status, err)
	}
	if err := d.Terminate("front"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hello(t, front); err == nil {
		t.Fatal("front answers after Terminate")
	}

	// An env value of the test's own: the front crashes after one request.
	crashing := lab.Start(ctx, t, Options{Env: map[string]map[string]string{"front": {"CRASH_AFTER": "1"}}})
	if status, _, err := hello(t, crashing.Addr("front")); err != nil || status != http.StatusOK {
		t.Fatalf("first request: %d %v", status, err)
	}
	if status, _, err := hello(t, crashing.Addr("front")); err == nil {
		t.Fatalf("second request answered %d, want none: CRASH_AFTER=1 was not set", status)
	}
}

// A lab without a build deploys no variant that needs it, and says which.
func TestWithoutBuildsLeavesThemUnbuilt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	lab := Open(ctx, t, tiny, "", WithoutBuilds("svc"))
	if v, ok := lab.Values()["build.svc"]; ok {
		t.Fatalf("build.svc = %q, want it unbuilt", v)
	}
	v, err := lab.variant(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := lab.lab.Deploy(ctx, lab.study, v, t.TempDir()); err == nil || !strings.Contains(err.Error(), "build.svc") {
		if err == nil {
			d.Stop()
		}
		t.Fatalf("deploy without its build: %v, want an error naming build.svc", err)
	}
}

// Deployments started together are each the variant asked, with its own
// env, on addresses of their own.
func TestStartAllDeploysTogether(t *testing.T) {
	ctx, lab := openTiny(t)
	ds := lab.StartAll(ctx, t, Options{}, Options{Env: map[string]map[string]string{"front": {"CRASH_AFTER": "1"}}}, Options{})
	if len(ds) != 3 || ds[0].Addr("front") == ds[2].Addr("front") {
		t.Fatalf("deployments %v", ds)
	}
	for i, d := range ds {
		if status, body, err := hello(t, d.Addr("front")); err != nil || status != http.StatusOK || body != "front+hello" {
			t.Fatalf("deployment %d answered %d %q %v", i, status, body, err)
		}
	}
	// Only the second crashes after one request.
	if _, _, err := hello(t, ds[1].Addr("front")); err == nil {
		t.Error("the second deployment's front answers twice: its env was not its own")
	}
	if _, _, err := hello(t, ds[0].Addr("front")); err != nil {
		t.Errorf("the first deployment's front: %v", err)
	}
}

// failures records what a check reports instead of failing the test.
type failures struct {
	testing.TB
	errs []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *failures) Helper() {}

// StopCleanly passes a service that exits 0 on SIGTERM and fails, saying
// why, one that SIGTERM ends by its signal and one that must be killed.
func TestStopCleanlyHoldsServicesToTheirPromise(t *testing.T) {
	ctx, lab := openTiny(t)
	for _, c := range []struct {
		action string
		opts   []StopOption
		says   []string // what the failures say, one per instance
	}{
		{"0", nil, nil},
		{"143", nil, nil}, // the JVM's status after its shutdown hooks
		{"1", nil, []string{"backend ended", "front ended"}},
		{"", nil, []string{"backend ended", "front ended"}}, // dead of the signal
		{"", []StopOption{DiesBySIGTERM()}, nil},
		{"1", []StopOption{DiesBySIGTERM()}, []string{"exit status 1", "exit status 1"}},
		{"ignore", []StopOption{DiesBySIGTERM()}, []string{"backend still ran", "front still ran"}},
	} {
		t.Run(fmt.Sprintf("TERM_ACTION=%s,%d options", c.action, len(c.opts)), func(t *testing.T) {
			env := map[string]string{"TERM_ACTION": c.action}
			d := lab.Start(ctx, t, Options{Env: map[string]map[string]string{"backend": env, "front": env}})
			f := &failures{TB: t}
			exits := StopCleanly(f, d, c.opts...)
			if len(exits) != 2 || exits[0].Instance != "backend" || exits[1].Instance != "front" {
				t.Fatalf("exits %+v, want backend's and front's", exits)
			}
			if len(f.errs) != len(c.says) {
				t.Fatalf("%d failures, want %d: %q", len(f.errs), len(c.says), f.errs)
			}
			for i, w := range c.says {
				if !strings.Contains(f.errs[i], w) {
					t.Errorf("failure %q lacks %q", f.errs[i], w)
				}
			}
		})
	}
}
