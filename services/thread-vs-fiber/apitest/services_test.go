package apitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	stopGrace    = 10 * time.Second
)

func start(ctx context.Context, t *testing.T, spec proc.Spec, base string) {
	t.Helper()
	began := time.Now()
	p, err := proc.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		if err := p.Stop(context.Background(), stopGrace); err != nil {
			t.Errorf("stop %s: %v", spec.Name, err)
		}
	})
	if err := proc.WaitReady(ctx, p, proc.HTTPCheck{URL: base + "/healthz"}, readyTimeout); err != nil {
		t.Fatalf("%s not ready: %v", spec.Name, err)
	}
	t.Logf("%s ready in %s", spec.Name, time.Since(began).Round(time.Millisecond))
}

func buildGin(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "thread-vs-fiber-gin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = "../gin"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../gin: %v\n%s", err, out)
	}
	return bin
}

func startGin(ctx context.Context, t *testing.T, bin, dbURL string, ports *proc.PortAllocator) string {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	start(ctx, t, proc.Spec{
		Name:    "gin",
		Path:    bin,
		Env:     []string{"ADDR=" + addr, "DATABASE_URL=" + dbURL, "MAX_IMAGE_BYTES=" + strconv.Itoa(maxImageBytes)},
		LogPath: filepath.Join(t.TempDir(), "gin.log"),
	}, "http://"+addr)
	return "http://" + addr
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
	cmd.Dir = "../spring"
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
// with virtual, on virtual threads, and returns its base URL and log path.
func startSpring(ctx context.Context, t *testing.T, virtual bool, dbURL string, ports *proc.PortAllocator) (string, string) {
	t.Helper()
	port, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	logPath := filepath.Join(t.TempDir(), "spring.log")
	runSh, err := filepath.Abs("../spring/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	name := "spring-platform-threads"
	if virtual {
		name = "spring-virtual-threads"
	}
	start(ctx, t, proc.Spec{
		Name: name,
		Path: runSh,
		Env: []string{
			"PORT=" + strconv.Itoa(port),
			"DATABASE_URL=" + dbURL,
			"MAX_IMAGE_BYTES=" + strconv.Itoa(maxImageBytes),
			"SPRING_THREADS_VIRTUAL_ENABLED=" + strconv.FormatBool(virtual),
			// Startup speed over peak speed: the test measures nothing.
			"JAVA_OPTS=-XX:TieredStopAtLevel=1",
		},
		LogPath: logPath,
	}, base)
	return base, logPath
}
