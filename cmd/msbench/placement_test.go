package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/placement"
)

// msbench load --cpus places every thread of msbench, the generator, on
// the cores asked, as /proc/PID/status says while it runs, and its summary
// says so.
func TestLoadPlacesItselfWithCPUs(t *testing.T) {
	avail := placement.Available()
	if len(avail) < 2 {
		t.Skip("needs 2 cores")
	}
	want := avail[:1]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	cmd := exec.Command(msbenchBinary(t), "load", "--cpus", want.String(), "-q", "--json", "-u", "2", "-d", "1500ms", srv.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the load runs (its connections are open), every thread is
	// placed.
	pid := strconv.Itoa(cmd.Process.Pid)
	var seen []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		status, _ := os.ReadFile(filepath.Join("/proc", pid, "status"))
		if strings.Contains(string(status), "Cpus_allowed_list:\t"+want.String()+"\n") {
			time.Sleep(300 * time.Millisecond) // into the load
			tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
			for _, task := range tasks {
				tid, _ := strconv.Atoi(task.Name())
				if c, err := placement.Allowed(tid); err == nil {
					seen = append(seen, c.String())
				}
			}
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("msbench load: %v\n%s", err, stderr.String())
	}
	if len(seen) < 2 {
		t.Fatalf("never saw msbench (pid %s) on cores %s with its threads: %v", pid, want, seen)
	}
	for _, c := range seen {
		if c != want.String() {
			t.Errorf("a thread of msbench runs on %s, want %s (all: %v)", c, want, seen)
		}
	}
	var s struct {
		Requests  int64   `json:"requests"`
		Cores     string  `json:"generator_cpus"`
		CPUUtil   float64 `json:"generator_cpu_utilization"`
		Successes int64   `json:"successes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if s.Cores != want.String() || s.Successes == 0 {
		t.Fatalf("summary %+v, want generator_cpus %s", s, want)
	}
	t.Logf("%d threads on %s; %d requests, generator at %.0f%% of its core", len(seen), want, s.Requests, 100*s.CPUUtil)
}
