package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func runTiny(t *testing.T, profile string, ctx context.Context) (string, string, error) {
	t.Helper()
	return runStudy(t, "testdata/tiny.yaml", profile, ctx)
}

// runStudy runs a study with a build cache of the test's own, so that
// svcProcesses finds exactly this test's services.
func runStudy(t *testing.T, file, profile string, ctx context.Context) (string, string, error) {
	t.Helper()
	s, err := study.Load(file, profile)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dir, err := Run(ctx, s, testOptions(t, &log))
	return dir, log.String(), err
}

func testOptions(t *testing.T, log io.Writer) Options {
	return Options{
		Root:        repoRoot(t),
		ResultsRoot: t.TempDir(),
		CacheDir:    filepath.Join(t.TempDir(), "cache"),
		DataDir:     t.TempDir(),
		Log:         log,
	}
}

// svcProcesses lists live processes running a binary built by this test
// (other packages' tests may run the same service meanwhile).
func svcProcesses(t *testing.T) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.HasPrefix(cmdline, []byte(os.TempDir()+"/"+testDirPrefix(t))) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// testDirPrefix is how t.TempDir names this test's directories.
func testDirPrefix(t *testing.T) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

func TestTinyStudyEndToEnd(t *testing.T) {
	dir, log, err := runTiny(t, "healthy", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if done := r.State().Done; len(done) != 2 {
		t.Fatalf("done %v, want both steps", done)
	}
	for step, want := range map[string]int64{"closed": 200, "open": 200} {
		stepDir := r.StepDir(1, "0", step)
		s, err := stepDir.ReadSummary()
		if err != nil {
			t.Fatal(err)
		}
		if s.Requests != want || s.Successes != want {
			t.Fatalf("%s: %d requests, %d ok, want %d: %v", step, s.Requests, s.Successes, want, s.Errors)
		}
		if _, ok := s.ServerTiming["handler"]; !ok {
			t.Fatalf("%s: no handler Server-Timing in %v", step, s.ServerTiming)
		}
		rows, err := stepDir.ReadRecords()
		if err != nil || int64(len(rows)) != want {
			t.Fatalf("%s: %d records, %v", step, len(rows), err)
		}
		res, err := stepDir.ReadResources()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Services) != 2 || res.Method == "" {
			t.Fatalf("%s: resources %+v", step, res)
		}
		for _, u := range res.Services {
			if u.Name == "front" && (u.CPUUserS+u.CPUSysS <= 0 || u.PeakMemBytes <= 0) {
				t.Fatalf("%s: front used no CPU or memory: %+v", step, u)
			}
		}
	}
	if w, err := r.StepDir(1, "0", "closed").ReadWarmup(); w == nil || err != nil {
		t.Fatalf("warm-up summary: %v", err)
	}
	prov, err := r.ReadProvenance()
	if err != nil {
		t.Fatal(err)
	}
	if prov.CPUModel == "" || prov.Cores == 0 || prov.Builds["svc"] == "" || prov.EndedAt.IsZero() || prov.ResourceMethod == "" {
		t.Fatalf("provenance %+v", prov)
	}
	st, err := r.VariantDir(1, "0").ReadStartup()
	if err != nil || st == nil {
		t.Fatal(err)
	}
	// Verification sent one request per step before the load.
	if len(st.Instances) != 2 || st.Instances[0].ReadyS <= 0 || len(st.FirstRequests) != 2 || st.FirstSuccessS < st.Instances[1].ReadyS {
		t.Fatalf("startup %+v", st)
	}
	for _, f := range []string{"study.yaml", "logs/rep-1/0/front.log", "logs/rep-1/0/backend.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	// Each service's TMPDIR is its own, and goes with the deployment.
	front, err := os.ReadFile(filepath.Join(dir, "logs/rep-1/0/front.log"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`TMPDIR (\S*)`).FindSubmatch(front); m == nil || filepath.Base(string(m[1])) != "front" {
		t.Errorf("front's TMPDIR is not a directory of its own: %q", front)
	} else if _, err := os.Stat(string(m[1])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("front's TMPDIR %s outlived the run: %v", m[1], err)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
	if tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), "msbench-run-*")); len(tmp) > 0 {
		for _, d := range tmp {
			if pid, _ := os.ReadFile(filepath.Join(d, "pid")); string(pid) == strconv.Itoa(os.Getpid()) {
				t.Fatalf("temporary directory left: %s", d)
			}
		}
	}
}

func TestCrashingServiceFailsItsVariantOnly(t *testing.T) {
	dir, log, err := runTiny(t, "", context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 of 2 variant runs failed") {
		t.Fatalf("run error %v\n%s", err, log)
	}
	r, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := r.State()
	why := st.Failed["rep-1/30"]
	if !strings.Contains(why, "crashing after 30 requests") {
		t.Fatalf("failure reason %q should quote the crashed service's log", why)
	}
	if !r.IsDone(results.UnitKey(1, "0", "open")) {
		t.Fatalf("the healthy variant was not measured: %v", st.Done)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

func TestFailedStartLeavesNothingRunning(t *testing.T) {
	dir, log, err := runStudy(t, "testdata/badstart.yaml", "", context.Background())
	if err == nil {
		t.Fatalf("run succeeded:\n%s", log)
	}
	r, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	why := r.State().Failed["rep-1/default"]
	if !strings.Contains(why, "start front") || !strings.Contains(why, "refusing to start as asked") {
		t.Fatalf("failure reason %q should name the service and quote its log", why)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

func TestInterruptedRunKeepsWhatFinishedAndResumes(t *testing.T) {
	s, err := study.Load("testdata/tiny.yaml", "healthy")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	opts := testOptions(t, &cancelAfter{w: &log, marker: "closed [1/2]: ", cancel: cancel})
	dir, err := Run(ctx, s, opts)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v\n%s", err, log.String())
	}
	r, _ := results.Open(dir)
	if !r.IsDone(results.UnitKey(1, "0", "closed")) || r.IsDone(results.UnitKey(1, "0", "open")) {
		t.Fatalf("done after interrupt: %v", r.State().Done)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running after interrupt: %v", left)
	}
	opts.Resume, opts.Log = dir, &log
	if _, err := Run(context.Background(), s, opts); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	r, _ = results.Open(dir)
	if len(r.State().Done) != 2 {
		t.Fatalf("done after resume: %v", r.State().Done)
	}
}

// cancelAfter cancels the run once a line with marker was logged.
type cancelAfter struct {
	w      *bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.marker)) && bytes.Contains(p, []byte("req/s")) {
		defer c.cancel()
	}
	return c.w.Write(p)
}

func TestHooksEventsTagsAndFreshRestarts(t *testing.T) {
	dir, log, err := runStudy(t, "testdata/features.yaml", "", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, _ := results.Open(dir)
	hooks := r.StepDir(1, "2", "hooks")
	collected, err := hooks.ReadCollected()
	if err != nil {
		t.Fatal(err)
	}
	// Two backend replicas, reset before the load, together served every
	// request the front passed on.
	total := 0
	for _, a := range collected["backend-stats"] {
		var st struct{ Served int }
		if err := json.Unmarshal(a.Body, &st); err != nil {
			t.Fatal(err)
		}
		total += st.Served
	}
	if len(collected["backend-stats"]) != 2 || total != 50 {
		t.Fatalf("collected %s: %d answers, %d served, want 2 and 50", collected["backend-stats"], len(collected["backend-stats"]), total)
	}
	rows, err := hooks.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Tag < 1 {
			t.Fatalf("record %d has no tag", row.Seq)
		}
	}
	evs, err := r.StepDir(1, "2", "faults").ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5: %+v", len(evs), evs)
	}
	for _, ev := range evs {
		if ev.Error != "" || ev.DoneS < ev.AtS {
			t.Errorf("event %+v", ev)
		}
	}
	if evs[0].Status != 200 || evs[0].Headers["X-Served"] == "" {
		t.Errorf("request event %+v should keep status and headers", evs[0])
	}
	if !strings.Contains(log, "faults: restarting everything for cold caches") {
		t.Errorf("no fresh restart in the log:\n%s", log)
	}
	checkServiceRestart(t, r.StepDir(1, "2", "crash"))
	// A dependency restarted while it runs is no crash, and its new
	// process is accounted under its name.
	if evs, err := r.StepDir(1, "2", "dep-restart").ReadEvents(); err != nil || len(evs) != 1 || evs[0].Error != "" {
		t.Errorf("dependency restart: %+v, %v", evs, err)
	}
	if res, err := r.StepDir(1, "2", "dep-restart").ReadResources(); err != nil || !slices.ContainsFunc(res.Services, func(u results.ServiceUsage) bool { return u.Name == "cache" && u.PeakMemBytes > 0 }) {
		t.Errorf("the restarted dependency is not accounted: %+v, %v", res, err)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

// checkServiceRestart: both backends killed at 400 ms and started again at
// 900 ms; the front fails in between and answers again after, and the
// backends' usage over the step counts both of each's processes: never
// less than before the step, as it would be if the killed process's CPU
// were dropped (CPU is counted in 10 ms ticks, so it may not grow).
func checkServiceRestart(t *testing.T, step results.StepDir) {
	t.Helper()
	evs, err := step.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Action != "restart" || evs[1].Error != "" {
		t.Fatalf("events %+v", evs)
	}
	rows, err := step.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	start := rows[0].Intended
	for _, row := range rows {
		start = min(start, row.Intended)
	}
	restarted := evs[1].DoneS
	var down, failedDown, up, failedUp int
	for _, row := range rows {
		switch at := float64(row.Sent-start) / 1e9; {
		case at > 0.5 && at < 0.85:
			down++
			if row.Status != 200 {
				failedDown++
			}
		case at > restarted+0.1:
			up++
			if row.Status != 200 {
				failedUp++
			}
		}
	}
	t.Logf("backends down: %d of %d failed; restarted (ready %.2f s into the step): %d of %d failed", failedDown, down, restarted, failedUp, up)
	if down == 0 || failedDown < down*9/10 || up == 0 || failedUp > 0 {
		t.Errorf("down: %d of %d failed; after the restart: %d of %d failed", failedDown, down, failedUp, up)
	}
	res, err := step.ReadResources()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range res.Services {
		if u.Service == "backend" {
			n++
			if u.CPUUserS < 0 || u.CPUSysS < 0 {
				t.Errorf("%s used negative CPU over the step: %+v", u.Name, u)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d backends accounted, want 2", n)
	}
}
