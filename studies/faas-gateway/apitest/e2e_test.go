package apitest

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
	"github.com/msbench/msbench/internal/servertiming"
	"github.com/msbench/msbench/internal/study"
)

const studyFile = "../study.yaml"

// testTimeout bounds the whole test, the build included.
const testTimeout = 5 * time.Minute

var fiveDecimals = regexp.MustCompile(`^\d\.\d{5}$`)

const textPlain = "text/plain; charset=utf-8"

// maxN is the MATH_MAX_N the gateways run with, low so the limit is cheap to hit.
const maxN = 1_000_000

// rpcTimeout is the gateways' RPC_TIMEOUT, well below their default so
// that a call that hangs fails a check before the client gives up.
const rpcTimeout = 5 * time.Second

// The READ_HEADER_TIMEOUT and READ_TIMEOUT of the gateways the hostile
// cases are sent to, short so those cases end quickly.
const (
	readHeaderTimeout = time.Second
	readTimeout       = 2 * time.Second
)

// headerTimeout is when a gateway gives up on a request's headers:
// fasthttp (Fiber) has one deadline for the headers and the body.
func headerTimeout(framework string) time.Duration {
	if framework == "fiber" {
		return readTimeout
	}
	return readHeaderTimeout
}

// gateway is one variant of the study, deployed, as the checks address
// it: the gateway itself, not the generator's link in front of it (the
// link is the lab's; what a hostile client does to it says nothing of the
// framework).
type gateway struct {
	name      string // framework/policy
	framework string
	// hostile: this deployment has the short read timeouts, for the
	// hostile cases. The limits are the framework's, not the RPC
	// policy's, so one deployment per framework (the pooled one) has
	// them; the others keep the study's, so that only the shutdown grace
	// can end the stalled request of the sigterm check.
	hostile bool
	dep     *runner.Deployment
	runner.Instance
	base string // http://Addr
}

// deploy starts a variant of the study at its first link delay.
func deploy(ctx context.Context, t *testing.T, lab *deploytest.Lab, framework, policy string) *gateway {
	t.Helper()
	env := map[string]string{"RPC_TIMEOUT": rpcTimeout.String(), "MATH_MAX_N": strconv.Itoa(maxN)}
	hostile := policy == "pooled"
	if hostile {
		env["READ_HEADER_TIMEOUT"] = readHeaderTimeout.String()
		env["READ_TIMEOUT"] = readTimeout.String()
	}
	dep := lab.Start(ctx, t, deploytest.Options{
		Variant: map[string]string{"framework": framework, "policy": policy},
		Env:     map[string]map[string]string{"gateway": env},
	})
	in := dep.Instances("gateway")[0]
	return &gateway{name: framework + "/" + policy, framework: framework, hostile: hostile, dep: dep, Instance: in, base: "http://" + in.Addr}
}

// axes are the values of the study's framework and policy axes: every
// framework with every policy is checked.
func axes(t *testing.T) (frameworks, policies []string) {
	t.Helper()
	s, err := study.Load(studyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	values := func(name string) []string {
		i := slices.IndexFunc(s.Variants, func(a study.Axis) bool { return a.Name == name })
		if i < 0 {
			t.Fatalf("%s has no axis %s", studyFile, name)
		}
		return s.Variants[i].Values
	}
	return values("framework"), values("policy")
}

// durations are r's Server-Timing metrics in milliseconds, by name.
func durations(r apicheck.Response) map[string]float64 {
	metrics, _ := servertiming.Parse(nil, []byte(r.Header.Get("Server-Timing")))
	out := map[string]float64{}
	for _, m := range metrics {
		out[string(m.Name)] = m.Dur
	}
	return out
}

// checkOK asserts a 200 with all four timings in a consistent order.
func checkOK(t *testing.T, gw *gateway, path, contentType string) []byte {
	t.Helper()
	r := apicheck.Get(t, gw.base+path)
	if !apicheck.WantStatus(t, "GET "+path, r, http.StatusOK) {
		t.FailNow()
	}
	if got := r.Header.Get("Content-Type"); got != contentType {
		t.Errorf("GET %s: Content-Type %q, want %s", path, got, contentType)
	}
	apicheck.WantTimings(t, r, "handler", "pre", "rpc", "fn")
	// Values are rounded to the nanosecond, hence the slack.
	if m := durations(r); !(m["handler"]+1e-6 >= m["pre"]+m["rpc"] && m["rpc"] >= m["fn"]) {
		t.Errorf("GET %s: want handler >= pre + rpc and rpc >= fn, got %v", path, m)
	}
	return r.Body
}

// checkHealthy: /healthz answers "ok", without the RPC server.
func checkHealthy(t *testing.T, gw *gateway) {
	t.Helper()
	r := apicheck.Get(t, gw.base+"/healthz")
	if apicheck.WantStatus(t, "GET /healthz", r, http.StatusOK) && string(r.Body) != "ok" {
		t.Errorf("GET /healthz: %v, want ok", r)
	}
}

func checkServing(t *testing.T, gw *gateway) {
	checkHealthy(t, gw)
	checkOK(t, gw, "/empty", textPlain)
	if body := checkOK(t, gw, "/math?n=1000", textPlain); !fiveDecimals.Match(body) {
		t.Errorf("/math body %q, want pi with five decimals", body)
	}
	img, err := png.Decode(bytes.NewReader(checkOK(t, gw, "/image", "image/png")))
	if err != nil {
		t.Fatalf("/image does not decode as PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 664 || b.Dy() != 664 {
		t.Errorf("/image bounds %v, want 664x664", b)
	}

	// Errors are plain text with the reason (../services/README.md), so
	// not apicheck.WantError's JSON.
	for _, c := range []struct {
		name, path string
		status     int
		reason     string
	}{
		{"unknown path", "/nope", http.StatusNotFound, ""},
		{"n missing", "/math", http.StatusBadRequest, "missing"},
		{"n negative", "/math?n=-1", http.StatusBadRequest, "unsigned"},
		{"n not a number", "/math?n=pi", http.StatusBadRequest, "unsigned"},
		{"n beyond uint64", "/math?n=18446744073709551616", http.StatusBadRequest, "unsigned"},
		{"n over the limit", "/math?n=" + strconv.Itoa(maxN+1), http.StatusBadRequest, "limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := apicheck.Get(t, gw.base+c.path)
			if apicheck.WantStatus(t, "GET "+c.path, r, c.status) && !bytes.Contains(r.Body, []byte(c.reason)) {
				t.Errorf("GET %s: %v, want the reason %q", c.path, r, c.reason)
			}
			// Refused before any call: the handler's time only.
			if c.status == http.StatusBadRequest {
				apicheck.WantTimings(t, r, "handler")
			}
		})
	}
	checkHealthy(t, gw) // bad requests must not have hurt the server
}

// checkRPCDown kills the deployment's RPC server: the gateway answers
// every call at once with 502 or 503 and a reason.
func checkRPCDown(t *testing.T, gw *gateway) {
	if err := gw.dep.Kill("rpc"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first call may meet a stale pooled connection
		r := apicheck.Get(t, gw.base+"/empty")
		if r.Status != http.StatusBadGateway && r.Status != http.StatusServiceUnavailable {
			t.Errorf("%s: %v, want 502 or 503", gw.name, r)
		}
		if len(bytes.TrimSpace(r.Body)) == 0 {
			t.Errorf("%s: %d without a reason", gw.name, r.Status)
		}
		if r.Took > 2*time.Second {
			t.Errorf("%s: answer took %v, want a fast failure", gw.name, r.Took)
		}
		if _, ok := durations(r)["handler"]; !ok {
			t.Errorf("%s: Server-Timing %q, want a handler metric", gw.name, r.Header.Get("Server-Timing"))
		}
	}
}

// checkRPCBack restarts the RPC server on its address: the gateway serves
// again without a restart of its own.
func checkRPCBack(ctx context.Context, t *testing.T, gw *gateway) {
	if err := gw.dep.Restart(ctx, "rpc"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := apicheck.Get(t, gw.base+"/empty")
		if r.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s did not recover: %v", gw.name, r)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkOK(t, gw, "/math?n=1000", textPlain)
}

func TestGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the services, starts a deployment of two processes per framework and RPC policy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	lab := deploytest.Open(ctx, t, studyFile, "")
	frameworks, policies := axes(t)
	var gateways []*gateway
	for _, fw := range frameworks {
		for _, policy := range policies {
			gateways = append(gateways, deploy(ctx, t, lab, fw, policy))
		}
	}
	// each runs check on every gateway that keep selects, all at once.
	each := func(keep func(*gateway) bool, check func(*testing.T, *gateway)) func(*testing.T) {
		return func(t *testing.T) {
			for _, gw := range gateways {
				if !keep(gw) {
					continue
				}
				t.Run(gw.name, func(t *testing.T) {
					t.Parallel()
					check(t, gw)
				})
			}
		}
	}
	all := func(*gateway) bool { return true }

	t.Run("serving", each(all, checkServing))
	// One /sleep per gateway, all at once, so they cost one second together.
	t.Run("sleep", each(all, func(t *testing.T, gw *gateway) {
		r := apicheck.Get(t, gw.base+"/sleep")
		if fn := durations(r)["fn"]; r.Status != http.StatusOK || fn < 1000 {
			t.Errorf("/sleep: %d, fn %v ms; want 200 and at least 1000 ms", r.Status, fn)
		}
	}))
	t.Run("hostile", each(func(gw *gateway) bool { return gw.hostile }, checkHostile))
	t.Run("rpc down", each(all, checkRPCDown))
	t.Run("rpc back", each(all, func(t *testing.T, gw *gateway) { checkRPCBack(ctx, t, gw) }))
	// As they end, so last.
	t.Run("sigterm", each(func(gw *gateway) bool { return !gw.hostile }, checkSigterm))
}
