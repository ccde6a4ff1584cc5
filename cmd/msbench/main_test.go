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
	"time"
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
		{"zero rate", []string{"load", "-r", "0", "http://127.0.0.1/"}, "rate of 0 sends nothing"},
		{"impossible rate", []string{"load", "-r", "1e12", "-d", "1s", "http://127.0.0.1/"}, "beyond what one machine can send"},
		{"impossible stage", []string{"load", "--stages", "1s:1e9", "http://127.0.0.1/"}, "beyond what one machine can send"},
		{"bad min-success", []string{"load", "--min-success", "150%", "http://127.0.0.1/"}, "--min-success"},
		{"both models", []string{"load", "-u", "5", "-r", "10", "http://127.0.0.1/"}, "choose one"},
		{"think in open model", []string{"load", "-r", "10", "--think", "1s", "http://127.0.0.1/"}, "closed model only"},
		{"stages and duration", []string{"load", "--stages", "1s:5", "-d", "1s", "http://127.0.0.1/"}, "stages set the duration"},
		{"bad think", []string{"load", "--think", "2s-1s", "http://127.0.0.1/"}, "--think"},
		{"bad stages", []string{"load", "--stages", "10s", "http://127.0.0.1/"}, "DURATION:RATE"},
		{"bad arrivals", []string{"load", "-r", "5", "--arrivals", "bursty", "http://127.0.0.1/"}, "uniform or poisson"},
		{"bad pacing", []string{"load", "-r", "5", "--pacing", "exact", "http://127.0.0.1/"}, "want precise or coarse"},
		{"pacing in closed model", []string{"load", "--pacing", "coarse", "http://127.0.0.1/"}, "open model only"},
		{"tick without coarse pacing", []string{"load", "-r", "5", "--tick", "1ms", "http://127.0.0.1/"}, "coarse pacing only"},
		{"bad header", []string{"load", "-H", "NoColon", "http://127.0.0.1/"}, "Name: value"},
		{"bad status", []string{"load", "--expect-status", "999", "http://127.0.0.1/"}, "not a status code"},
		{"missing body file", []string{"load", "--body", "@/nonexistent/file", "http://127.0.0.1/"}, "--body"},
		{"bad form", []string{"load", "--form", "novalue", "http://127.0.0.1/"}, "--form"},
		{"body and form", []string{"load", "--body", "x", "--form", "a=b", "http://127.0.0.1/"}, "choose one"},
		{"bad cpus", []string{"load", "--cpus", "first", "http://127.0.0.1/"}, `--cpus: core list "first"`},
		{"missing core", []string{"load", "--cpus", "0,1000", "http://127.0.0.1/"}, "--cpus: core(s) 1000 do not exist on this machine"},
		{"unknown command", []string{"lode"}, "unknown command"},
		{"unknown dependency", []string{"deps", "up", "oracle"}, "see 'msbench deps up --help'"},
		{"no dependency", []string{"deps", "up"}, "postgres"},
		{"run without study", []string{"run"}, "one study name or file"},
		{"unknown study", []string{"run", "nosuchstudy", "--root", "../.."}, "no study \"nosuchstudy\""},
		{"no repetitions", []string{"run", "cache", "--root", "../..", "--repetitions", "0"}, "--repetitions must be at least 1"},
		{"zero width", []string{"run", "cache", "--root", "../..", "--target-width", "0%"}, "--target-width must be above 0%"},
		{"negative width", []string{"run", "cache", "--root", "../..", "--target-width", "-5%"}, "--target-width \"-5%\": must lie between 0 and 1"},
		{"unparsable width", []string{"run", "cache", "--root", "../..", "--target-width", "narrow"}, "--target-width \"narrow\": want a share"},
		{"short budget", []string{"run", "cache", "--root", "../..", "--target-width", "10%", "--budget", "30s"}, "--budget must be at least 1m0s"},
		{"unparsable budget", []string{"run", "cache", "--root", "../..", "--target-width", "10%", "--budget", "soon"}, "invalid argument"},
		{"budget without width", []string{"run", "cache", "--root", "../..", "--budget", "30m"}, "--budget bounds the repetitions --target-width adds"},
		{"most without width", []string{"run", "cache", "--root", "../..", "--max-repetitions", "9"}, "--max-repetitions bounds the repetitions --target-width adds"},
		{"most below the least", []string{"run", "cache", "--root", "../..", "--target-width", "10%", "--max-repetitions", "4"}, "--max-repetitions 4 is below the 5 repetitions"},
		{"most below the count asked", []string{"run", "cache", "--root", "../..", "--target-width", "10%", "--repetitions", "8", "--max-repetitions", "6"}, "--max-repetitions 6 is below the 8 repetitions"},
		{"bad idle", []string{"run", "cache", "--root", "../..", "--idle", "sleep"}, `--idle "sleep": want run or freeze`},
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

// The open model's duration bounds the run in wall time, whatever the rate
// and however many connections are stuck, and a cancel ends it at once.
func TestOpenModelEndsOnTime(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stuck" {
			<-block
		}
	}))
	defer srv.Close()
	defer close(block)
	tests := []struct {
		name string
		args []string
	}{
		{"highest rate, fast server", []string{"-r", "1e7", "-d", "1s", srv.URL + "/"}},
		{"highest rate, coarse pacing", []string{"-r", "1e7", "-d", "1s", "--pacing", "coarse", srv.URL + "/"}},
		{"stuck server", []string{"-r", "1e6", "-d", "1s", "-c", "4", "--timeout", "500ms", srv.URL + "/stuck"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(context.Background(), append([]string{"load", "-q", "--json", "--min-success", "0"}, tt.args...), &stdout, &stderr)
			took := time.Since(start)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if took > 2*time.Second {
				t.Fatalf("a 1-s load took %v", took)
			}
			var s struct {
				Valid     bool  `json:"valid"`
				Requests  int64 `json:"requests"`
				Unsent    int64 `json:"unsent"`
				Scheduled int64 `json:"scheduled"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			if s.Valid || s.Unsent == 0 || s.Scheduled != s.Requests+s.Unsent || s.Scheduled < 999_000 {
				t.Fatalf("an unreachable rate must leave arrivals unsent and the run invalid: %+v", s)
			}
		})
	}
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := run(ctx, []string{"load", "-q", "-r", "1e7", "-d", "1h", srv.URL + "/"}, &stdout, &stderr)
		if took := time.Since(start); code != 130 || took > time.Second {
			t.Fatalf("exit %d after %v, want 130 at once: %s", code, took, stderr.String())
		}
	})
}

// A load in which nothing succeeds did not measure the server: invalid,
// and exit 1, unless the user accepts it.
func TestLoadFailsUnderMinSuccess(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := closed.URL
	closed.Close()
	tests := []struct {
		name  string
		args  []string
		code  int
		valid bool
	}{
		{"every answer 503", []string{"-u", "2", "-n", "20", srv.URL}, 1, false},
		{"refused port", []string{"-u", "2", "-n", "20", refused}, 1, false},
		{"refused port, open model", []string{"-r", "50", "-d", "200ms", refused}, 1, false},
		{"accepted by --min-success 0", []string{"-u", "2", "-n", "20", "--min-success", "0", srv.URL}, 0, true},
		{"503 expected", []string{"-u", "2", "-n", "20", "--expect-status", "503", srv.URL}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"load", "-q", "--json", "--timeout", "1s"}, tt.args...), &stdout, &stderr)
			var s struct {
				Valid         bool `json:"valid"`
				SuccessRateOK bool `json:"success_rate_ok"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
				t.Fatalf("exit %d, no summary: %v: %s", code, err, stderr.String())
			}
			if code != tt.code || s.Valid != tt.valid || s.SuccessRateOK != tt.valid {
				t.Fatalf("exit %d, summary %+v; want exit %d, valid %v; stderr %q", code, s, tt.code, tt.valid, stderr.String())
			}
			if tt.code == 1 && !strings.Contains(stderr.String(), "--min-success") {
				t.Fatalf("stderr %q does not say why", stderr.String())
			}
		})
	}
}
