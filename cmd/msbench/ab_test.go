package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/checkout/checkouttest"
	"github.com/msbench/msbench/internal/compare"
	"github.com/msbench/msbench/internal/results"
)

// staticStudy is a study in the shape of a newcomer's first one: a static
// file server (Python's, which the machine has), one step, no analysis.
// Its server sleeps DELAY seconds before each answer.
var staticStudy = map[string]string{
	"studies/static/study.yaml": `study: static
title: Is a static file answered quickly?
source: msbench's own tests
services:
  web:
    command: "python3 {root}/studies/static/serve.py {port} {root}/studies/static/www"
    ready: {http: "http://{addr}/hello.txt"}
load:
  service: web
  steps:
    - name: greet
      users: 2
      requests: 400
      warmup: {requests: 40}
      targets: [{path: /hello.txt, expect_body: "Hello World!"}]
`,
	"studies/static/www/hello.txt": "Hello World!\n",
	"studies/static/serve.py": `import functools, http.server, sys, time

DELAY = 0.0


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go in two writes: with Nagle's algorithm the body
    # waits for the client's delayed ACK, 40 ms, which would hide 3.
    disable_nagle_algorithm = True

    def do_GET(self):
        if DELAY:
            time.sleep(DELAY)
        super().do_GET()

    def log_message(self, *args):
        pass


handler = functools.partial(Handler, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
`,
}

// TestABGatesAChange: ab on the same build twice passes, and on a build
// whose server takes 3 ms more per request fails, each well within its
// budget; the copy of BASE is gone afterwards. The margin, 50%, is far
// from both truths (1× and several ×) so that the test cannot flake; that
// the gate's false alarms stay under 5% at any margin is compare's
// calibration's to show.
func TestABGatesAChange(t *testing.T) {
	root := checkouttest.Repo(t, staticStudy)
	const budget = 5 * time.Minute
	ab := func(t *testing.T) (int, *compare.Report, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"ab", "static", "--root", root, "--results", t.TempDir(), "--base", "HEAD",
			"--repetitions", "3", "--budget", budget.String(), "--fail-if", "p50>+50%", "--json"}, &stdout, &stderr)
		var r compare.Report
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("exit %d, stdout is no report: %v\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
		}
		copied := regexp.MustCompile(`copied to (\S+)`).FindStringSubmatch(stderr.String())
		if copied == nil {
			t.Fatalf("stderr does not say where BASE was copied:\n%s", stderr.String())
		}
		if _, err := os.Stat(copied[1]); !os.IsNotExist(err) {
			t.Errorf("the copy of BASE %s outlived the command: %v", copied[1], err)
		}
		runDir := regexp.MustCompile(`run directory: (\S+)`).FindStringSubmatch(stderr.String())
		if runDir == nil {
			t.Fatalf("stderr names no run directory:\n%s", stderr.String())
		}
		run, err := results.Open(runDir[1])
		if err != nil {
			t.Fatal(err)
		}
		prov, err := run.ReadProvenance()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(prov.Sources["base"], "HEAD (") {
			t.Errorf("provenance keeps BASE as %q, want HEAD and its commit", prov.Sources["base"])
		}
		if took := prov.EndedAt.Sub(prov.StartedAt); took > budget {
			t.Errorf("the run took %v, past its %v budget", took, budget)
		}
		return code, &r, stderr.String()
	}
	check := func(t *testing.T, r *compare.Report) {
		t.Helper()
		if len(r.Comparisons) != 1 || r.Comparisons[0].Method != compare.MethodPaired || r.Comparisons[0].BaseRuns != 3 || r.Comparisons[0].NewRuns != 3 {
			t.Fatalf("comparisons %+v, want greet compared paired over 3 repetitions", r.Comparisons)
		}
		if r.Gate == nil || r.Gate.Tests != 1 || r.Base.Source == "" || !strings.HasPrefix(r.Base.Source, "HEAD (") {
			t.Errorf("gate %+v, base %+v", r.Gate, r.Base)
		}
	}
	t.Run("same build twice", func(t *testing.T) {
		code, r, stderr := ab(t)
		check(t, r)
		if code != 0 || r.Failed {
			t.Errorf("exit %d, failed %v; want 0 for the same build twice\n%s", code, r.Failed, stderr)
		}
	})
	t.Run("3 ms more per request", func(t *testing.T) {
		serve := filepath.Join(root, "studies/static/serve.py")
		text, err := os.ReadFile(serve)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(serve, bytes.Replace(text, []byte("DELAY = 0.0"), []byte("DELAY = 0.003"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		code, r, stderr := ab(t)
		check(t, r)
		p50 := r.Comparisons[0].Metric("p50")
		if code != 1 || !r.Failed || !strings.Contains(stderr, "--fail-if p50>+50%: greet") {
			t.Errorf("exit %d, failed %v, p50 ×%v (%v–%v); want 1 for a build 3 ms slower\n%s", code, r.Failed, p50.Estimate, p50.Lo, p50.Hi, stderr)
		}
		// The paired interval must show the change, not just cross a line:
		// 3 ms on an answer of well under 3 ms is more than twice as slow.
		if p50.Lo < 1.5 {
			t.Errorf("p50 ratio %v (%v–%v): the 3 ms do not show", p50.Estimate, p50.Lo, p50.Hi)
		}
	})
}

func TestABBadUsage(t *testing.T) {
	root := checkouttest.Repo(t, staticStudy)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no base", []string{}, "--base is required"},
		{"unknown ref", []string{"--base", "no-such-branch"}, `git ref "no-such-branch" names no commit`},
		{"option as ref", []string{"--base", "--output=x"}, "does not begin with '-'"},
		{"no users", []string{"--base", "HEAD", "--users", "-1"}, "--users -1: want at least 1"},
		{"too few repetitions", []string{"--base", "HEAD", "--repetitions", "2"}, "--repetitions 2: ab decides on at least 3"},
		{"unknown variant", []string{"--base", "HEAD", "--variants", "go"}, `--variants: `},
		{"unknown step", []string{"--base", "HEAD", "--steps", "nosuch"}, `no step matches "nosuch"`},
		{"bad rule", []string{"--base", "HEAD", "--fail-if", "p99<+5%"}, "p99 gets worse by going up"},
		{"unknown profile", []string{"--base", "HEAD", "--profile", "paper"}, `no profile "paper"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"ab", "static", "--root", root}, c.args...), &stdout, &stderr)
			if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line saying %q", code, stderr.String(), c.want)
			}
		})
	}
}
