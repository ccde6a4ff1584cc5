package apitest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/runner/deploytest"
)

const (
	// maxImageBytes is the MAX_IMAGE_BYTES the services get, small so the
	// over-limit upload stays small too.
	maxImageBytes = 200_000
	// headerTimeout and bodyTimeout are the services' HEADER_TIMEOUT and
	// BODY_TIMEOUT, short so the slow-client checks are quick.
	headerTimeout = time.Second
	bodyTimeout   = 3 * time.Second
)

// overrides are all the tests change of the study file: the limits above
// and, for the JVM, startup speed over peak speed (the test measures
// nothing; Go ignores JAVA_OPTS).
var overrides = map[string]map[string]string{"images": {
	"MAX_IMAGE_BYTES": strconv.Itoa(maxImageBytes),
	"HEADER_TIMEOUT":  headerTimeout.String(),
	"BODY_TIMEOUT":    bodyTimeout.String(),
	"JAVA_OPTS":       "-XX:TieredStopAtLevel=1",
}}

// service is the images service of one deployment, as the checks address
// it.
type service struct {
	d    *runner.Deployment
	name string // the instance's, for d's accounting
	base string // http://addr
	log  string
	tmp  string // its TMPDIR
	db   *pgx.Conn
	// tomcat: the Spring service, whose Tomcat differs from net/http where
	// the HTTP layer leaves room (the checks say where).
	tomcat bool
}

// deploy starts the variant impl of the study, from ../study.yaml with the
// overrides, on a Postgres of its own, and connects to that database. At
// cleanup the service must stop cleanly with an upload still in flight.
func deploy(ctx context.Context, t *testing.T, lab *deploytest.Lab, impl string) *service {
	t.Helper()
	began := time.Now()
	d := lab.Start(ctx, t, deploytest.Options{Variant: map[string]string{"impl": impl}, Env: overrides})
	t.Logf("%s ready in %s", impl, time.Since(began).Round(time.Millisecond))
	in := d.Instances("images")[0]
	svc := &service{d: d, name: in.Name, base: "http://" + in.Addr, log: in.Log, tmp: in.Tmp, tomcat: onJVM(impl)}
	// Registered after Start's, so it runs first: the service is stopped
	// here, checked, and the harness's stop finds nothing left to do.
	t.Cleanup(func() { svc.stopCleanly(t) })
	var err error
	if svc.db, err = pgx.Connect(ctx, d.Values()["dep.db.url"]); err != nil {
		t.Fatalf("%s: connect to its database: %v", impl, err)
	}
	t.Cleanup(func() { svc.db.Close(context.Background()) })
	return svc
}

// stopCleanly stops the deployment with an upload in flight: the service
// must still end by itself, with status 0, within the lab's grace after
// SIGTERM.
func (s *service) stopCleanly(t *testing.T) {
	defer uploadInFlight(s.base)()
	for _, e := range deploytest.StopCleanly(t, s.d) {
		t.Logf("%s stopped %s after SIGTERM", e.Instance, e.After.Round(time.Millisecond))
	}
}

// uploadInFlight starts an upload whose body trickles in, a byte every
// 100 ms, never ending before its connection is closed; the returned func
// closes it.
func uploadInFlight(base string) func() {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return func() {}
	}
	go func() {
		conn.Write([]byte(stalledHead))
		for {
			if _, err := conn.Write([]byte{'-'}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond) // for the server to read the headers
	return func() { conn.Close() }
}

// onJVM: the variant impl runs the Spring service, on the JVM.
func onJVM(impl string) bool { return strings.HasPrefix(impl, "spring-") }

// checkExecutor: the variant really runs requests on the executor it was
// configured for, as the service logs at start.
func checkExecutor(t *testing.T, svc *service, want string) {
	t.Helper()
	log, err := os.ReadFile(svc.log)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(log)) {
		if strings.Contains(line, "Tomcat runs requests on") {
			if !strings.Contains(line, want) {
				t.Errorf("want requests on %s, log says: %s", want, line)
			}
			return
		}
	}
	t.Errorf("log does not say which executor runs requests:\n%s", proc.LogTail(svc.log, 20))
}

// checkTomcatWork: Tomcat makes its work directory in java.io.tmpdir at
// start; run.sh must point that at the TMPDIR the lab gives the service,
// or every run leaves one in /tmp.
func checkTomcatWork(t *testing.T, svc *service) {
	t.Helper()
	if work, _ := filepath.Glob(filepath.Join(svc.tmp, "tomcat.*")); len(work) == 0 {
		t.Errorf("no tomcat.* work directory in its TMPDIR %s: java.io.tmpdir is not TMPDIR", svc.tmp)
	}
}
