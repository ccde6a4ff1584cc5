package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadUsageIsOneLineAndExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"load"}, "exactly one URL"},
		{"two URLs", []string{"load", "http://a/", "http://b/"}, "exactly one URL"},
		{"bad scheme", []string{"load", "ftp://127.0.0.1/"}, "scheme must be http or https"},
		{"no host", []string{"load", "http:///x"}, "no host"},
		{"unparsable URL", []string{"load", "http://[::1"}, "bad URL"},
		{"unknown flag", []string{"load", "--bogus", "http://127.0.0.1/"}, "unknown flag: --bogus"},
		{"bad duration", []string{"load", "-d", "soon", "http://127.0.0.1/"}, "invalid argument"},
		{"negative rate", []string{"load", "-r", "-5", "http://127.0.0.1/"}, "rate must be a positive number"},
		{"both models", []string{"load", "-u", "5", "-r", "10", "http://127.0.0.1/"}, "choose one"},
		{"think in open model", []string{"load", "-r", "10", "--think", "1s", "http://127.0.0.1/"}, "closed model only"},
		{"stages and duration", []string{"load", "--stages", "1s:5", "-d", "1s", "http://127.0.0.1/"}, "stages set the duration"},
		{"bad think", []string{"load", "--think", "2s-1s", "http://127.0.0.1/"}, "--think"},
		{"bad stages", []string{"load", "--stages", "10s", "http://127.0.0.1/"}, "DURATION:RATE"},
		{"bad arrivals", []string{"load", "-r", "5", "--arrivals", "bursty", "http://127.0.0.1/"}, "uniform or poisson"},
		{"bad pacing", []string{"load", "-r", "5", "--pacing", "exact", "http://127.0.0.1/"}, "want precise or coarse"},
		{"pacing in closed model", []string{"load", "--pacing", "coarse", "http://127.0.0.1/"}, "open model only"},
		{"tick without coarse pacing", []string{"load", "-r", "5", "--tick", "1ms", "http://127.0.0.1/"}, "coarse pacing only"},
		{"coarse pacing over https", []string{"load", "-r", "5", "--pacing", "coarse", "https://127.0.0.1/"}, "plain http only"},
		{"bad header", []string{"load", "-H", "NoColon", "http://127.0.0.1/"}, "Name: value"},
		{"bad status", []string{"load", "--expect-status", "999", "http://127.0.0.1/"}, "not a status code"},
		{"missing body file", []string{"load", "--body", "@/nonexistent/file", "http://127.0.0.1/"}, "--body"},
		{"bad form", []string{"load", "--form", "novalue", "http://127.0.0.1/"}, "--form"},
		{"body and form", []string{"load", "--body", "x", "--form", "a=b", "http://127.0.0.1/"}, "choose one"},
		{"unknown command", []string{"lode"}, "unknown command"},
		{"unknown dependency", []string{"deps", "up", "oracle"}, "see 'msbench deps up --help'"},
		{"no dependency", []string{"deps", "up"}, "postgres"},
		{"run without study", []string{"run"}, "one study name or file"},
		{"unknown study", []string{"run", "nosuchstudy", "--root", "../.."}, "no study \"nosuchstudy\""},
		{"report of a non-run", []string{"report", "."}, "not an msbench results directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) {
				t.Fatalf("stderr %q: want one line mentioning %q", msg, tt.want)
			}
		})
	}
}

func TestRunNamesTheBadStudyFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	text := "study: bad\nservices:\n  api:\n    command: x\n    ready: {tcp: \"{addr}\"}\nload:\n  service: api\n  steps:\n    - name: s\n      users: lots\n      requests: 5\n      targets: [{path: /}]\n      colour: blue\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", file, "--root", "../.."}, &stdout, &stderr)
	msg := stderr.String()
	if code != 2 || !strings.Contains(msg, file+":10: load.steps[0].users: want a whole number") || !strings.Contains(msg, file+":13: load.steps[0].colour: unknown field") {
		t.Fatalf("exit %d, stderr:\n%s", code, msg)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout %q", stdout.String())
	}
}

func TestLoadWritesRecordsAndJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, h, err := r.FormFile("image")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.Close()
		w.Header().Set("Server-Timing", "handler;dur=0.3")
		fmt.Fprintf(w, "got %s %d", h.Filename, h.Size)
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "x.png")
	if err := os.WriteFile(file, []byte("\x89PNG\r\n\x1a\nfake"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"load", "-q", "--json", "-m", "post", "--form", "image=@" + file,
		"-u", "2", "-n", "20", "--expect-body", "got x.png 12", "--out", out, srv.URL}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var s struct {
		Requests  int64                      `json:"requests"`
		Successes int64                      `json:"successes"`
		Errors    map[string]int64           `json:"errors"`
		Timing    map[string]json.RawMessage `json:"server_timing_ms"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("stdout is not the summary JSON: %v\n%s", err, stdout.String())
	}
	if s.Requests != 20 || s.Successes != 20 || s.Timing["handler"] == nil {
		t.Fatalf("summary %+v", s)
	}
	for _, name := range []string{"records.parquet", "summary.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
}
