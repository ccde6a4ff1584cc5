// Package apitest builds the RPC server and the five gateway binaries and checks
// them as real processes over loopback TCP.
package apitest

import (
	"bufio"
	"bytes"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	frameworks = []string{"nethttp", "gin", "echo", "fiber", "iris"}
	policies   = []string{"dial", "pooled"}

	listeningOn  = regexp.MustCompile(`listening on (\S+)`)
	timingMetric = regexp.MustCompile(`^(handler|pre|rpc|fn);dur=(\d+\.\d+)$`)
	fiveDecimals = regexp.MustCompile(`^\d\.\d{5}$`)
)

const textPlain = "text/plain; charset=utf-8"

// maxN is the MATH_MAX_N the gateways run with, low so the limit is cheap to hit.
const maxN = 1_000_000

// The gateways' READ_HEADER_TIMEOUT and READ_TIMEOUT, short so the hostile
// cases end quickly.
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

var client = &http.Client{Timeout: 10 * time.Second}

// process is a started binary whose output is kept for failure reports.
type process struct {
	name string
	addr string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop kills the process and waits for it; it is safe to call twice.
func (p *process) stop() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	<-p.done
}

// start runs bin with env added to the environment, waits for its
// "listening on" line and kills it when the test ends.
func start(t *testing.T, name, bin string, env ...string) *process {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{name: name, cmd: exec.Command(bin), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	w.Close()
	t.Cleanup(p.stop)

	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			fmt.Fprintln(&p.out, sc.Text())
			p.mu.Unlock()
			if m := listeningOn.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not report its address; output:\n%s", name, p.output())
	}
	return p
}

// build compiles every binary of the module into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-o", dir, "./...")
	cmd.Dir = "../services" // the module of the systems under test
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp, body
}

// timings parses a Server-Timing header into durations in milliseconds.
func timings(t *testing.T, header string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range strings.Split(header, ",") {
		parts := timingMetric.FindStringSubmatch(strings.TrimSpace(m))
		if parts == nil {
			t.Errorf("malformed Server-Timing metric %q in %q", m, header)
			continue
		}
		out[parts[1]], _ = strconv.ParseFloat(parts[2], 64)
	}
	return out
}

// checkOK asserts a 200 with all four timings in a consistent order.
func checkOK(t *testing.T, gw *process, path, contentType string) []byte {
	t.Helper()
	resp, body := get(t, "http://"+gw.addr+path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %q", path, resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); got != contentType {
		t.Errorf("GET %s: Content-Type %q, want %s", path, got, contentType)
	}
	m := timings(t, resp.Header.Get("Server-Timing"))
	if len(m) != 4 {
		t.Errorf("GET %s: Server-Timing %q, want handler, pre, rpc and fn", path, resp.Header.Get("Server-Timing"))
	}
	// Values are rounded to the nanosecond, hence the slack.
	if !(m["handler"]+1e-6 >= m["pre"]+m["rpc"] && m["rpc"] >= m["fn"]) {
		t.Errorf("GET %s: want handler >= pre + rpc and rpc >= fn, got %v", path, m)
	}
	return body
}

func waitHealthy(t *testing.T, gw *process) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("http://" + gw.addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy: %v; output:\n%s", gw.name, err, gw.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func checkServing(t *testing.T, gw *process) {
	waitHealthy(t, gw)
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

	bad := []struct {
		path   string
		status int
		reason string
	}{
		{"/nope", http.StatusNotFound, ""},
		{"/math", http.StatusBadRequest, "missing"},
		{"/math?n=-1", http.StatusBadRequest, "unsigned"},
		{"/math?n=pi", http.StatusBadRequest, "unsigned"},
		{"/math?n=18446744073709551616", http.StatusBadRequest, "unsigned"},
		{"/math?n=" + strconv.Itoa(maxN+1), http.StatusBadRequest, "limit"},
	}
	for _, tt := range bad {
		resp, body := get(t, "http://"+gw.addr+tt.path)
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.reason) {
			t.Errorf("GET %s: %d %q, want %d with %q", tt.path, resp.StatusCode, body, tt.status, tt.reason)
		}
		if tt.status == http.StatusBadRequest && !strings.Contains(resp.Header.Get("Server-Timing"), "handler;dur=") {
			t.Errorf("GET %s: Server-Timing %q, want a handler metric", tt.path, resp.Header.Get("Server-Timing"))
		}
	}
	waitHealthy(t, gw) // bad requests must not have hurt the server
}

func TestGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every binary")
	}
	bin := build(t)
	data := t.TempDir()
	rpcserver := filepath.Join(bin, "rpcserver")
	rpc := start(t, "rpcserver", rpcserver, "ADDR=127.0.0.1:0", "DATA_DIR="+data)

	var gateways []*process
	for _, fw := range frameworks {
		for _, policy := range policies {
			gateways = append(gateways, start(t, fw+"/"+policy, filepath.Join(bin, "gateway-"+fw),
				"ADDR=127.0.0.1:0", "RPC_ADDR="+rpc.addr, "RPC_POLICY="+policy,
				"RPC_TIMEOUT=5s", "MATH_MAX_N="+strconv.Itoa(maxN),
				"READ_HEADER_TIMEOUT="+readHeaderTimeout.String(), "READ_TIMEOUT="+readTimeout.String()))
		}
	}

	t.Run("serving", func(t *testing.T) {
		for _, gw := range gateways {
			t.Run(gw.name, func(t *testing.T) {
				t.Parallel()
				checkServing(t, gw)
			})
		}
	})

	// One /sleep per gateway, all at once, so they cost one second together.
	t.Run("sleep", func(t *testing.T) {
		for _, gw := range gateways {
			t.Run(gw.name, func(t *testing.T) {
				t.Parallel()
				resp, _ := get(t, "http://"+gw.addr+"/sleep")
				if fn := timings(t, resp.Header.Get("Server-Timing"))["fn"]; resp.StatusCode != http.StatusOK || fn < 1000 {
					t.Errorf("/sleep: %d, fn %v ms; want 200 and at least 1000 ms", resp.StatusCode, fn)
				}
			})
		}
	})

	// The limits are the framework's, not the RPC policy's: one gateway
	// per framework.
	t.Run("hostile", func(t *testing.T) {
		for _, gw := range gateways {
			framework, policy, _ := strings.Cut(gw.name, "/")
			if policy != "pooled" {
				continue
			}
			t.Run(framework, func(t *testing.T) {
				t.Parallel()
				checkHostile(t, gw, framework)
			})
		}
	})

	rpc.stop()
	t.Run("rpc down", func(t *testing.T) {
		for _, gw := range gateways {
			for range 2 { // the first call may meet a stale pooled connection
				start := time.Now()
				resp, body := get(t, "http://"+gw.addr+"/empty")
				if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("%s: %d %q, want 502 or 503", gw.name, resp.StatusCode, body)
				}
				if len(bytes.TrimSpace(body)) == 0 {
					t.Errorf("%s: %d without a reason", gw.name, resp.StatusCode)
				}
				if elapsed := time.Since(start); elapsed > 2*time.Second {
					t.Errorf("%s: answer took %v, want a fast failure", gw.name, elapsed)
				}
				if !strings.Contains(resp.Header.Get("Server-Timing"), "handler;dur=") {
					t.Errorf("%s: Server-Timing %q, want a handler metric", gw.name, resp.Header.Get("Server-Timing"))
				}
			}
		}
	})

	start(t, "rpcserver (restarted)", rpcserver, "ADDR="+rpc.addr, "DATA_DIR="+data)
	t.Run("rpc back", func(t *testing.T) {
		for _, gw := range gateways {
			deadline := time.Now().Add(5 * time.Second)
			for {
				resp, body := get(t, "http://"+gw.addr+"/empty")
				if resp.StatusCode == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%s did not recover: %d %q", gw.name, resp.StatusCode, body)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			checkOK(t, gw, "/math?n=1000", textPlain)
		}
	})

	// On gateways of their own, as they end; with the default timeouts, so
	// that only the shutdown grace can end the stalled request.
	t.Run("sigterm", func(t *testing.T) {
		for _, fw := range frameworks {
			t.Run(fw, func(t *testing.T) {
				t.Parallel()
				gw := start(t, fw+"/sigterm", filepath.Join(bin, "gateway-"+fw),
					"ADDR=127.0.0.1:0", "RPC_ADDR="+rpc.addr, "RPC_TIMEOUT=5s")
				waitHealthy(t, gw)
				checkSigterm(t, gw)
			})
		}
	})
}
