package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/linkpod"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/proc"
)

// linkChildEnv makes TestLinkProcess an `msbench link` with the JSON list
// of arguments it holds, stopped by signals as main's commands are.
const linkChildEnv = "MSBENCH_LINK_TEST_ARGS"

// TestLinkProcess is `msbench link` in a child of TestLinkCommand; in a
// plain test run it does nothing.
func TestLinkProcess(t *testing.T) {
	raw := os.Getenv(linkChildEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cmd := newLinkCmd()
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestLinkCommand runs the command as a pod does, on loopback: a request
// through a 20 ms link takes at least its 40 ms round trip, /stats counts
// the connections, a reset fault makes the next request fail and clearing
// it lets requests through again, and SIGTERM ends it with status 0,
// freeing its address.
func TestLinkCommand(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "upstream") }))
	defer upstream.Close()
	var ports proc.PortAllocator
	listen, control := loopbackPort(t, &ports), loopbackPort(t, &ports)
	args, _ := json.Marshal([]string{"--name", "test>upstream", "--listen", listen, "--to", upstream.Listener.Addr().String(),
		"--latency", "20ms", "--control", control})
	cmd := exec.Command(os.Args[0], "-test.run=^TestLinkProcess$")
	cmd.Env = append(os.Environ(), linkChildEnv+"="+string(args))
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		io.Copy(io.Discard, stdout)
	}()
	var ready linkpod.Ready
	select {
	case s := <-line:
		if err := json.Unmarshal([]byte(s), &ready); err != nil {
			t.Fatalf("ready line %q: %v; stderr:\n%s", s, err, stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("no ready line within a minute; stderr:\n%s", stderr)
	}
	if ready.Event != "ready" || ready.Listen != listen || ready.Control != control || ready.Link != "latency 20ms" {
		t.Fatalf("ready line %+v", ready)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	url := "http://" + listen + "/"
	if body, err := get(client, url); err != nil || body != "upstream" {
		t.Fatalf("GET through the link: %q, %v", body, err)
	}
	// On the connection now open, each request crosses the link twice.
	for range 3 {
		began := time.Now()
		if _, err := get(client, url); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < 40*time.Millisecond {
			t.Errorf("a request through a 20 ms link took %s, under its 40 ms round trip", took)
		}
	}
	if s := stats(t, "GET", control, ""); s.Accepted != 1 || s.Open != 1 || s.Fault != "none" {
		t.Errorf("stats %+v, want the one kept-alive connection, open, no fault", s)
	}

	if s := stats(t, "POST", control, `{"fault": "reset"}`); s.Fault != "reset" {
		t.Errorf("after POST /fault reset: %+v", s)
	}
	if body, err := get(client, url); err == nil {
		t.Errorf("a request through a reset link answered %q", body)
	}
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if body, err := get(fresh, url); err == nil {
		t.Errorf("a request on a new connection through a reset link answered %q", body)
	}
	stats(t, "POST", control, `{"fault": "none"}`)
	if body, err := get(fresh, url); err != nil || body != "upstream" {
		t.Errorf("after the fault is cleared: %q, %v", body, err)
	}
	for _, bad := range []string{`{"fault": "melt"}`, `{"fault": "reset", "delay": "1s"}`, `{"fault": "slow_close", "delay": "soon"}`, `not json`} {
		resp, err := http.Post("http://"+control+"/fault", "application/json", strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST /fault %s: %s, want 400", bad, resp.Status)
		}
	}

	client.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v; stderr:\n%s", err, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after SIGTERM; stderr:\n%s", stderr)
	}
	for _, addr := range []string{listen, control} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s not freed: %v", addr, err)
			continue
		}
		ln.Close()
	}
}

func loopbackPort(t *testing.T, ports *proc.PortAllocator) string {
	t.Helper()
	p, err := ports.Next()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(p)
}

func get(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// stats calls the link's control endpoint and decodes its answer.
func stats(t *testing.T, method, control, body string) linkpod.Stats {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+control+map[string]string{"GET": "/stats", "POST": "/fault"}[method], strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s linkpod.Stats
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %s %s", method, control, resp.Status, msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A bad flag is bad usage, named, before anything is bound.
func TestLinkBadUsage(t *testing.T) {
	ok := []string{"--listen", "127.0.0.1:7000", "--to", "10.252.0.12:8080", "--control", "127.0.0.1:7001"}
	with := func(flag, value string) []string {
		out := append([]string(nil), ok...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = value
				return out
			}
		}
		return append(out, flag, value)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --to", []string{"--listen", "127.0.0.1:7000", "--control", "127.0.0.1:7001"}, `--to "": want IP:PORT`},
		{"no --listen", []string{"--to", "10.0.0.1:80", "--control", "127.0.0.1:7001"}, `--listen "": want IP:PORT`},
		{"public --to", with("--to", "8.8.8.8:53"), "loopback or private"},
		{"name as --to", with("--to", "example.com:80"), "want IP:PORT"},
		{"no port in --to", with("--to", "10.0.0.1:0"), "loopback or private"},
		{"wildcard --listen", with("--listen", "0.0.0.0:7000"), "not a wildcard"},
		{"wildcard --control", with("--control", "[::]:7001"), "not a wildcard"},
		{"same addresses", with("--control", "127.0.0.1:7000"), "both 127.0.0.1:7000"},
		{"bad latency", with("--latency", "soon"), "--latency"},
		{"negative jitter", with("--jitter", "-1ms"), "--jitter"},
		{"bad bandwidth", with("--bandwidth", "fast"), "--bandwidth"},
		{"an argument", append(with("--latency", "1ms"), "extra"), "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newLinkCmd()
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // were the flags taken, Run would return at once
			err := cmd.ExecuteContext(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
			var ue usageError
			if tt.name != "an argument" && !errors.As(err, &ue) {
				t.Errorf("%v is not a usage error (exit 2)", err)
			}
		})
	}
}

// The arguments a link pod is given (linkpod.Args) are the command's: the
// link it starts is the spec Deploy was asked for.
func TestLinkTakesDeployArgs(t *testing.T) {
	tests := []links.Spec{
		{},
		{Latency: 10 * time.Millisecond},
		{Latency: 500 * time.Microsecond, Jitter: 100 * time.Microsecond},
		{Latency: time.Millisecond, Bandwidth: 1500},
		{Bandwidth: 2_500_000_000},
	}
	var ports proc.PortAllocator
	for _, spec := range tests {
		t.Run(spec.String(), func(t *testing.T) {
			listen, control := loopbackPort(t, &ports), loopbackPort(t, &ports)
			pod := "$(" + linkpod.PodIPEnv + ")"
			args := linkpod.Args("gateway>rpc", spec, "10.252.0.12:8080")
			if args[0] != "link" {
				t.Fatalf("args %q do not run msbench link", args)
			}
			for i, a := range args {
				args[i] = strings.NewReplacer(pod+":"+strconv.Itoa(linkpod.ProxyPort), listen, pod+":"+strconv.Itoa(linkpod.ControlPort), control).Replace(a)
			}
			cmd := newLinkCmd()
			cmd.SetArgs(args[1:])
			out := new(strings.Builder)
			cmd.SetOut(out)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the link stops as soon as it is ready
			if err := cmd.ExecuteContext(ctx); err != nil {
				t.Fatalf("msbench %q: %v", args, err)
			}
			var ready linkpod.Ready
			if err := json.Unmarshal([]byte(out.String()), &ready); err != nil {
				t.Fatalf("ready line %q: %v", out, err)
			}
			if ready.Name != "gateway>rpc" || ready.Link != spec.String() || ready.Listen != listen || ready.Control != control {
				t.Errorf("ready %+v, want link gateway>rpc (%s) on %s and %s", ready, spec, listen, control)
			}
		})
	}
}
