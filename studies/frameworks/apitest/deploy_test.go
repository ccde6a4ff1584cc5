package apitest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
	"github.com/msbench/msbench/internal/toolchain"
)

const (
	// readHeaderTimeout and readTimeout are the programs' READ_HEADER_TIMEOUT
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

// framework is one system under test: a value of the study's framework
// axis, whose build has the same name.
type framework struct {
	name string
	// loads are the UNIVERSITIES_LOAD values (the study's load axis) it is
	// deployed with, one after another, the authors' own first.
	loads []string
	// env is added to the environment of each of its programs.
	env map[string]string
	// hostile adapts the standard hostile requests to what the framework's
	// HTTP server does and cannot be configured out of.
	hostile func([]hostile.Case) []hostile.Case
	// backends are the programs behind the gateway that serve HTTP; the
	// hostile requests go to them too, made for their limits and adapted
	// by backendHostile.
	backends       []backend
	backendLimits  hostile.Limits
	backendHostile func([]hostile.Case) []hostile.Case
	// tools are the programs its build and its programs need, and jdk the
	// major version of the JDK they run on (0 for none); without one the
	// framework is skipped, saying so.
	tools []string
	jdk   int
	// stop is what its programs' clean end on SIGTERM may look like
	// besides status 0 (or the JVM's 143).
	stop []deploytest.StopOption
}

// backend is a program behind the gateway that serves HTTP: the study's
// service of that name answers a request of method and path with header
// (and Content-Type: application/json) and body 200; the hostile requests
// start the same way.
type backend struct {
	name         string
	method, path string
	header       [][2]string
	body         string
}

// programs are the study's services; those a framework does not run
// (when:) take no notice of the environment the test gives them.
var programs = []string{"eureka", "nats", "hello", "universities", "gateway"}

// missing says what fw lacks to be built or run here, "" when nothing.
func (fw framework) missing() string { return toolchain.Missing(fw.jdk, fw.tools...) }

// deployment is a framework's variant of the study, started.
type deployment struct {
	fw      framework
	load    string // the UNIVERSITIES_LOAD in force
	dataset string // the deployment's own copy of the dataset
	dep     *runner.Deployment
	base    string // http://ADDR, the gateway
}

// deploy starts fw's variant of the study with load, as the study file
// says, changing only the read timeouts (short), the dataset (a copy of
// the deployment's own, which the test may change) and adding fw.env.
func deploy(ctx context.Context, t *testing.T, lab *deploytest.Lab, fw framework, load string, data dataset) *deployment {
	t.Helper()
	d := &deployment{fw: fw, load: load, dataset: data.copyTo(t)}
	env := map[string]map[string]string{}
	for _, name := range programs {
		env[name] = map[string]string{}
		maps.Copy(env[name], fw.env)
	}
	for _, name := range []string{"hello", "universities", "gateway"} {
		env[name]["READ_HEADER_TIMEOUT"] = readHeaderTimeout.String()
		env[name]["READ_TIMEOUT"] = readTimeout.String()
	}
	env["universities"]["UNIVERSITIES_FILE"] = d.dataset
	began := time.Now()
	d.dep = lab.Start(ctx, t, deploytest.Options{
		Variant: map[string]string{"framework": fw.name, "load": load},
		Env:     env,
	})
	d.base = "http://" + d.dep.Addr("gateway")
	t.Logf("%s (UNIVERSITIES_LOAD=%s) ready after %s", fw.name, load, time.Since(began).Round(time.Millisecond))
	return d
}

// stop stops d now and fails t for each program that did not end cleanly
// within the grace after SIGTERM, and says how long each took.
func (d *deployment) stop(t *testing.T) {
	t.Helper()
	for _, e := range deploytest.StopCleanly(t, d.dep, d.fw.stop...) {
		t.Logf("%s stopped %s after SIGTERM", e.Instance, e.After.Round(time.Millisecond))
	}
}
