package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/fanout"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/results"
)

// generateCmd runs msbench generate with args, stdin as its input.
func generateCmd(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := newGenerateCmd()
	var stdout bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(bytes.NewReader(stdin))
	cmd.SetOut(&stdout)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	return stdout.String(), err
}

// TestGenerateCommands: two msbench generate commands, one spec read from
// a file and one from standard input, send one load at a fixed rate from
// one start; merged, every request is there once at the rate asked.
func TestGenerateCommands(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	const rate = 100.0
	spec := loadspec.Spec{Open: true, Rate: rate, Duration: time.Second, Connections: 4, Targets: []load.Target{{URL: srv.URL}}}
	specs, err := fanout.Specs(spec, 2, time.Now().Add(time.Second).Round(0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dirs := []results.StepDir{results.StepDir(filepath.Join(tmp, "a")), results.StepDir(filepath.Join(tmp, "b"))}
	first, _ := json.Marshal(specs[0])
	second, _ := json.Marshal(specs[1])
	specFile := filepath.Join(tmp, "spec0.json")
	if err := os.WriteFile(specFile, first, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		outs[0], errs[0] = generateCmd(context.Background(), nil, "-q", "--spec", specFile, "--out", string(dirs[0]))
	}()
	go func() {
		defer wg.Done()
		outs[1], errs[1] = generateCmd(context.Background(), second, "-q", "--json", "--spec", "-", "--out", string(dirs[1]))
	}()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("generator %d: %v", i+1, err)
		}
	}
	if !strings.Contains(outs[0], "records: "+dirs[0].RecordsPath()) {
		t.Errorf("generator 1 printed %q", outs[0])
	}
	var s1 struct{ Requests int64 }
	if err := json.Unmarshal([]byte(outs[1]), &s1); err != nil || s1.Requests == 0 {
		t.Errorf("generator 2 printed %q (%v)", outs[1], err)
	}
	out := results.StepDir(filepath.Join(tmp, "merged"))
	m, err := fanout.Merge(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	rows, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		if seen[r.Seq] {
			t.Fatalf("sequence number %d twice", r.Seq)
		}
		seen[r.Seq] = true
	}
	if int64(len(rows)) != s.Requests || s.Requests+s.Unsent != 100 {
		t.Errorf("%d records, %d requests, %d unsent; want 100 in all", len(rows), s.Requests, s.Unsent)
	}
	// Generous and one-sided below: the machine is busy.
	if s.TargetRPS != rate || s.ThroughputRPS < rate/2 || s.ThroughputRPS > rate*100/99 {
		t.Errorf("target %v req/s, throughput %.1f; want %v asked and about that sent", s.TargetRPS, s.ThroughputRPS, rate)
	}
}

func TestGenerateUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"load": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"no spec", []string{"--out", dir}, "", "needs --spec and --out"},
		{"no out", []string{"--spec", "-"}, "", "needs --spec and --out"},
		{"an argument", []string{"--spec", "-", "--out", dir, "http://127.0.0.1/"}, "", "takes no arguments"},
		{"no such file", []string{"--spec", filepath.Join(dir, "none.json"), "--out", dir}, "", "no such file"},
		{"not a spec", []string{"--spec", bad, "--out", dir}, "", "cannot unmarshal"},
		{"empty stdin", []string{"--spec", "-", "--out", dir}, "", "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := generateCmd(context.Background(), []byte(tt.stdin), tt.args...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a usage error saying %q", err, tt.want)
			}
		})
	}
}

func TestGenerateInterruptedExits130(t *testing.T) {
	specs, err := fanout.Specs(loadspec.Spec{Users: 1, Iterations: 1, Targets: []load.Target{{URL: "http://127.0.0.1:9/"}}}, 1, time.Now().Add(time.Minute), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(specs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := generateCmd(ctx, data, "-q", "--spec", "-", "--out", t.TempDir()); !errors.Is(err, errInterrupted) {
		t.Errorf("interrupted while waiting for the start: %v, want errInterrupted", err)
	}
}

// TestGenerateOutToStdout: with --out - a generator's output comes back
// as a tar stream on stdout, which fanout.ReadOutputs unpacks into the
// step a directory output would have been; a spec over 1 MiB (a large
// upload's body) arrives whole through stdin.
func TestGenerateOutToStdout(t *testing.T) {
	var got sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n, true)
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	body := bytes.Repeat([]byte("x"), 3<<19)
	spec := loadspec.Spec{Users: 2, Requests: 6, Targets: []load.Target{{URL: srv.URL, Method: "POST", Body: body}}}
	specs, err := fanout.Specs(spec, 1, time.Now().Add(500*time.Millisecond).Round(0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(specs[0])
	if len(data) <= 1<<20 {
		t.Fatalf("spec of %d bytes, want over 1 MiB", len(data))
	}
	out, err := generateCmd(context.Background(), data, "--progress-json", "--spec", "-", "--out", "-")
	if err != nil {
		t.Fatal(err)
	}
	dir := results.StepDir(filepath.Join(t.TempDir(), "gen"))
	if err := fanout.ReadOutputs(strings.NewReader(out), dir); err != nil {
		t.Fatal(err)
	}
	m, err := fanout.Read([]results.StepDir{dir})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.Requests != 6 || m.Summary.Successes != 6 {
		t.Errorf("%d requests, %d successes; want 6 of 6", m.Summary.Requests, m.Summary.Successes)
	}
	if _, ok := got.Load(int64(len(body))); !ok {
		t.Errorf("the server never got the %d-byte body whole", len(body))
	}
	if _, err := generateCmd(context.Background(), data, "--json", "--spec", "-", "--out", "-"); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Errorf("--json with --out -: %v, want a usage error", err)
	}
}

// TestGenerateProgressJSON: --progress-json writes lines that
// fanout.ParseProgress reads, and nothing else on stderr.
func TestGenerateProgressJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	spec := loadspec.Spec{Open: true, Rate: 50, Duration: 1500 * time.Millisecond, Connections: 2, Targets: []load.Target{{URL: srv.URL}}}
	specs, err := fanout.Specs(spec, 1, time.Now().Add(300*time.Millisecond).Round(0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(specs[0])
	cmd := newGenerateCmd()
	var stderr bytes.Buffer
	cmd.SetArgs([]string{"--progress-json", "--spec", "-", "--out", "-"})
	cmd.SetIn(bytes.NewReader(data))
	cmd.SetOut(io.Discard)
	cmd.SetErr(&stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	var last load.Snapshot
	for _, line := range lines {
		s, ok := fanout.ParseProgress(line)
		if !ok {
			t.Fatalf("stderr line %q is not a progress line", line)
		}
		last = s
	}
	if last.Requests == 0 {
		t.Errorf("progress %q: no request counted", stderr.String())
	}
}

// TestGenerateIdleEndsOnSignal: --idle waits until its context ends
// (SIGTERM, in msbench's main) and then exits 0.
func TestGenerateIdleEndsOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := generateCmd(ctx, nil, "--idle")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("--idle returned before its context ended: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("--idle ended with %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("--idle did not end with its context")
	}
}

// TestGenerateFetch: --fetch sends the one request on stdin and prints
// status, headers and body; a target outside this machine and the
// cluster's networks is refused before any dial.
func TestGenerateFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Header.Get("X-Ask"))
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		req     fanout.FetchRequest
		want    string // in the body, or in the error when status is 0
		status  int
		wantErr bool
	}{
		{"loopback", fanout.FetchRequest{Method: "PUT", URL: srv.URL, Header: http.Header{"X-Ask": {"yes"}}, Body: []byte("hello")}, "PUT hello", http.StatusTeapot, false},
		{"outside", fanout.FetchRequest{URL: "http://192.0.2.1/"}, "neither on this machine nor inside the cluster", 0, true},
		{"outside the cluster's networks", fanout.FetchRequest{URL: "http://192.0.2.1/", ClusterNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "10.0.0.0/8", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := json.Marshal(tt.req)
			out, err := generateCmd(context.Background(), data, "--fetch")
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %v, want one saying %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var resp fanout.FetchResponse
			if err := json.Unmarshal([]byte(out), &resp); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			if resp.Status != tt.status || string(resp.Body) != tt.want || resp.Header.Get("X-Seen") != "yes" {
				t.Errorf("answer %+v, want %d %q with X-Seen: yes", resp, tt.status, tt.want)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer written by a command and read by the
// test meanwhile.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestGenerateAwaitsStdinEnd: with its input on stdin, generate --fetch
// (and --out -) writes its output and then waits until stdin ends before
// exiting, so the output of a pod's exec is all read before the process
// exits (a container runtime can lose what a process wrote as it exited).
func TestGenerateAwaitsStdinEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	data, _ := json.Marshal(fanout.FetchRequest{URL: srv.URL})
	stdinR, stdinW := io.Pipe()
	var stdout lockedBuffer
	cmd := newGenerateCmd()
	cmd.SetArgs([]string{"--fetch"})
	cmd.SetIn(stdinR)
	cmd.SetOut(&stdout)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	if _, err := stdinW.Write(data); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.HasSuffix(stdout.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no answer on stdout: %q", stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("exited (%v) with its stdin still open", err)
	case <-time.After(500 * time.Millisecond):
	}
	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("did not exit once its stdin ended")
	}
}
