package apitest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
)

const (
	// maxImageBytes is the MAX_IMAGE_BYTES the services get, small so the
	// over-limit upload stays small too.
	maxImageBytes = 200_000
	// readyTimeout covers a JVM start on a busy 2-core machine.
	readyTimeout = 2 * time.Minute
	// harnessKill is when the lab harness SIGKILLs a service after SIGTERM.
	harnessKill = 2 * time.Second
	// headerTimeout and bodyTimeout are the services' HEADER_TIMEOUT and
	// BODY_TIMEOUT, short so the slow-client checks are quick.
	headerTimeout = time.Second
	bodyTimeout   = 3 * time.Second
)

// timeoutEnv configures the services' timeouts (both read the same syntax).
var timeoutEnv = []string{"HEADER_TIMEOUT=" + headerTimeout.String(), "BODY_TIMEOUT=" + bodyTimeout.String()}

// service is one started service under test.
type service struct {
	base string
	pid  int
	// tomcat: the Spring service, whose Tomcat differs from net/http where
	// the HTTP layer leaves room (the checks say where).
	tomcat bool
}

func start(ctx context.Context, t *testing.T, spec proc.Spec, base string) int {
	t.Helper()
	began := time.Now()
	p, err := proc.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		// The harness kills 2 s after SIGTERM; the service must be gone by
		// then on its own, even with a request in flight.
		defer uploadInFlight(base)()
		began := time.Now()
		if err := p.Stop(context.Background(), harnessKill); err != nil {
			t.Errorf("stop %s: %v", spec.Name, err)
		}
		if killed(p) {
			t.Errorf("%s: still running %v after SIGTERM, had to be killed", spec.Name, harnessKill)
		} else {
			t.Logf("%s stopped %s after SIGTERM", spec.Name, time.Since(began).Round(time.Millisecond))
		}
	})
	if err := proc.WaitReady(ctx, p, proc.HTTPCheck{URL: base + "/healthz"}, readyTimeout); err != nil {
		t.Fatalf("%s not ready: %v", spec.Name, err)
	}
	t.Logf("%s ready in %s", spec.Name, time.Since(began).Round(time.Millisecond))
	return p.Pid()
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

// killed reports whether p ended by SIGKILL.
func killed(p *proc.Process) bool {
	var ee *exec.ExitError
	if !errors.As(p.ExitErr(), &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func buildGin(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "thread-vs-fiber-gin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = "../services/gin"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../gin: %v\n%s", err, out)
	}
	return bin
}

func startGin(ctx context.Context, t *testing.T, bin, dbURL string, ports *proc.PortAllocator) service {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	pid := start(ctx, t, proc.Spec{
		Name: "gin",
		Path: bin,
		Env: append([]string{"ADDR=127.0.0.1:" + strconv.Itoa(port), "DATABASE_URL=" + dbURL,
			"MAX_IMAGE_BYTES=" + strconv.Itoa(maxImageBytes)}, timeoutEnv...),
		LogPath: filepath.Join(t.TempDir(), "gin.log"),
	}, base)
	return service{base: base, pid: pid}
}

// buildSpring runs spring/build.sh, which needs the JDK 25 and Maven.
func buildSpring(ctx context.Context, t *testing.T) {
	t.Helper()
	if !haveJDK25() {
		// The one reason to skip Spring: everything else must build.
		t.Skip("skipping the Spring service: no JDK 25 in /usr/lib/jvm/*25* " +
			"(install one there, e.g. Eclipse Temurin 25: temurin-25-jdk)")
	}
	began := time.Now()
	cmd := exec.CommandContext(ctx, "./build.sh")
	cmd.Dir = "../services/spring"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spring/build.sh: %v\n%s", err, out)
	}
	t.Logf("spring/build.sh took %s", time.Since(began).Round(time.Millisecond))
}

func haveJDK25() bool {
	dirs, _ := filepath.Glob("/usr/lib/jvm/*25*")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "bin", "java")); err == nil {
			return true
		}
	}
	return false
}

// startSpring runs the jar through spring/run.sh, on platform threads or,
// with virtual, on virtual threads, and returns it and its log path. run.sh
// execs java, so the process started is the JVM.
func startSpring(ctx context.Context, t *testing.T, virtual bool, dbURL string, ports *proc.PortAllocator) (service, string) {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	logPath := filepath.Join(t.TempDir(), "spring.log")
	runSh, err := filepath.Abs("../services/spring/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	name := "spring-platform-threads"
	if virtual {
		name = "spring-virtual-threads"
	}
	tmp := t.TempDir()
	pid := start(ctx, t, proc.Spec{
		Name: name,
		Path: runSh,
		Env: append([]string{
			"TMPDIR=" + tmp,
			"PORT=" + strconv.Itoa(port),
			"DATABASE_URL=" + dbURL,
			"MAX_IMAGE_BYTES=" + strconv.Itoa(maxImageBytes),
			"SPRING_THREADS_VIRTUAL_ENABLED=" + strconv.FormatBool(virtual),
			// Startup speed over peak speed: the test measures nothing.
			"JAVA_OPTS=-XX:TieredStopAtLevel=1",
		}, timeoutEnv...),
		LogPath: logPath,
	}, base)
	// Tomcat makes its work directory in java.io.tmpdir at start; run.sh
	// must point that at TMPDIR, or every run leaves one in /tmp.
	if work, _ := filepath.Glob(filepath.Join(tmp, "tomcat.*")); len(work) == 0 {
		t.Errorf("%s: no tomcat.* work directory in its TMPDIR %s: java.io.tmpdir is not TMPDIR", name, tmp)
	}
	return service{base: base, pid: pid, tomcat: true}, logPath
}
