package deps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

// proctest makes the test binary a subreaper and fails the run if any
// process is left behind, including one a server daemonized.
func TestMain(m *testing.M) { proctest.Main(m, proctest.Modes{"hold": hold}) }

// testTimeout bounds one kind's whole life, including a first build of
// FerretDB (about a minute on 2 cores) while other servers start.
const testTimeout = 4 * time.Minute

// client is how a test talks to a kind with its real client library.
type client struct {
	// server is the program of the server process, which Processes lists
	// first.
	server string
	// use writes key and reads it back.
	use func(ctx context.Context, in *Instance, key string) error
	// has reads key written before a restart; nil for kinds that keep
	// nothing across one (Redis without persistence, transient queues).
	has func(ctx context.Context, in *Instance, key string) error
	// login connects as user with password and makes a round trip; nil
	// for a kind without authentication.
	login func(ctx context.Context, in *Instance, user, password string) error
	// refused matches (a regexp) the error of a login with wrong
	// credentials.
	refused string
	// strangers are logins besides a wrong password that must be refused:
	// the server's well-known accounts.
	strangers []login
	// user is the system user the server runs as when msbench is root;
	// empty: root.
	user string
	// secrets are the files in the private dir that may hold the password
	// in the clear while the instance runs.
	secrets []string
}

type login struct{ user, password string }

// testLifecycle starts kind, uses it, restarts it cleanly and after a kill
// (the fault injection paths), uses it again on the same address, and
// checks that Stop leaves nothing behind.
func testLifecycle(t *testing.T, kind Kind, c client) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	in := startForTest(ctx, t, kind)
	if err := c.use(ctx, in, "before"); err != nil {
		t.Fatalf("use: %v", err)
	}
	checkCredentials(ctx, t, in, c)
	// What a study file may name before anything starts is what starts.
	if keys, err := Keys(kind); err != nil || !slices.Equal(keys, slices.Sorted(maps.Keys(in.Values))) {
		t.Errorf("Keys(%s) = %v (%v), the instance's values have %v", kind, keys, err, slices.Sorted(maps.Keys(in.Values)))
	}
	addr, url := in.Addr, in.URL
	first := in.Processes()
	if want := in.Name + "/" + c.server; first[0].Name() != want {
		t.Errorf("first process is %s, want the server %s", first[0].Name(), want)
	}
	checkServerProcess(t, in, c)

	begin := time.Now()
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s restarted in %v", kind, time.Since(begin).Round(time.Millisecond))
	if in.Addr != addr || in.URL != url {
		t.Fatalf("restart moved %s from %s to %s", kind, addr, in.Addr)
	}
	assertDead(t, first)
	if c.has != nil {
		if err := c.has(ctx, in, "before"); err != nil {
			t.Fatalf("data lost over a restart: %v", err)
		}
	}

	killed := in.Processes()
	for _, p := range killed {
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
	}
	begin = time.Now()
	// Each new process is told of as it starts, helpers first, so that
	// its start-up can be accounted.
	var started []*proc.Process
	if err := in.RestartEach(ctx, func(p *proc.Process) { started = append(started, p) }); err != nil {
		t.Fatalf("restart after kill: %v", err)
	}
	want := slices.Clone(in.Processes())
	slices.Reverse(want)
	if !slices.Equal(started, want) {
		t.Errorf("started %v, want the processes helpers first %v", started, want)
	}
	t.Logf("%s restarted after a kill in %v", kind, time.Since(begin).Round(time.Millisecond))
	if err := c.use(ctx, in, "after"); err != nil {
		t.Fatalf("use after restart: %v", err)
	}
	checkServerProcess(t, in, c)

	// Stop is the shutdown path: it must work when the run was cancelled.
	cancel()
	stopAndCheck(t, in)
}

// startForTest starts kind in a private dir and logs beside it, which are
// kept until the test ends so that a failure can show them.
func startForTest(ctx context.Context, t *testing.T, kind Kind) *Instance {
	t.Helper()
	base := tempDir(t)
	// Deep, as a run's nested temp dirs are: Unix socket paths, which
	// servers may put in their data dir, are limited to 107 bytes.
	dir := filepath.Join(base, strings.Repeat("d", 100), "instance")
	in, err := Start(ctx, kind, Options{Dir: dir, LogDir: filepath.Join(base, "logs")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s started in %v: %s (%s)", kind, in.StartupTime.Round(time.Millisecond), in.URL, in.Addr)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(base, "logs", "*.log"))
			for _, l := range logs {
				t.Logf("%s:\n%s", filepath.Base(l), proc.LogTail(l, 30))
			}
		}
		if err := in.Stop(); err != nil {
			t.Error(err)
		}
	})
	return in
}

// tempDir is a directory the servers' system users can reach, unlike
// t.TempDir, whose parent is private to root.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "msbench-deps-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// stopAndCheck stops in and checks that no process, port or file of it is
// left.
func stopAndCheck(t *testing.T, in *Instance) {
	t.Helper()
	procs, ports, dir := in.Processes(), instancePorts(in), in.env.dir
	begin := time.Now()
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s stopped in %v", in.Kind, time.Since(begin).Round(time.Millisecond))
	if err := in.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	assertDead(t, procs)
	for _, port := range ports {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("port %d still accepts connections after Stop", port)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private dir %s still there after Stop (%v)", dir, err)
	}
	if pids := processesMentioning(t, dir); len(pids) > 0 {
		t.Errorf("processes %v still refer to %s after Stop", pids, dir)
	}
}

// instancePorts lists every port the instance listens on.
func instancePorts(in *Instance) []int {
	ports := []int{in.env.port}
	if r, ok := in.srv.(*rabbitmq); ok {
		ports = append(ports, r.distPort, r.epmdPort)
	}
	return ports
}

// assertDead checks that no member of the processes' groups is alive.
func assertDead(t *testing.T, procs []*proc.Process) {
	t.Helper()
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		for _, s := range stats {
			if s.PGRP == p.Pid() && !s.Dead() {
				t.Errorf("%s: process %d (%s) of its group is still alive", p.Name(), s.PID, s.Comm)
			}
		}
	}
}

// processesMentioning finds live processes whose command line or
// environment contains dir: those that left their process group too.
func processesMentioning(t *testing.T, dir string) []int {
	t.Helper()
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, s := range stats {
		if s.Dead() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", s.PID, f))
			if bytes.Contains(b, []byte(dir)) {
				pids = append(pids, s.PID)
				break
			}
		}
	}
	return pids
}

func TestMissingProgramSaysWhatToInstall(t *testing.T) {
	want := map[Kind]string{
		Postgres: "postgres not found in %s: install the Debian package postgresql (scripts/install-deps postgresql)",
		Redis:    "redis-server not found in %s: install the Debian package redis-server (scripts/install-deps redis-server)",
		RabbitMQ: "rabbitmq-server not found in %s: install the Debian package rabbitmq-server (scripts/install-deps rabbitmq-server)",
		MariaDB:  "mariadbd not found in %s: install the Debian package mariadb-server (scripts/install-deps mariadb-server)",
		// FerretDB's store is looked for first.
		Mongo: "the MongoDB stand-in stores its documents in PostgreSQL: postgres not found in %s: install the Debian package postgresql (scripts/install-deps postgresql)",
	}
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			empty := t.TempDir()
			dir := filepath.Join(t.TempDir(), "instance")
			_, err := Start(context.Background(), kind, Options{Dir: dir, BinDir: empty})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(want[kind], empty)) {
				t.Fatalf("got %v, want an error containing %q", err, fmt.Sprintf(want[kind], empty))
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("failed start created %s", dir)
			}
		})
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	_, err := ParseKind("mysql")
	if err == nil || !strings.Contains(err.Error(), "known: mariadb, mongo, postgres, rabbitmq, redis") {
		t.Fatalf("got %v, want the known kinds listed", err)
	}
}

// A start cut short, here during initdb, leaves nothing behind.
func TestCancelledStartCleansUp(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(tempDir(t), "instance")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Postgres, Options{Dir: dir})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cancelled start left %s", dir)
	}
	if pids := processesMentioning(t, dir); len(pids) > 0 {
		t.Errorf("cancelled start left processes %v", pids)
	}
}

// A private dir that the postgres user cannot enter is reported as such,
// not as a cryptic initdb failure.
func TestUnreachableDirIsExplained(t *testing.T) {
	t.Parallel()
	private := t.TempDir() // mode 0700, owned by root
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Postgres, Options{Dir: filepath.Join(private, "instance")})
	if err == nil || !strings.Contains(err.Error(), "runs as user postgres, which cannot enter") {
		t.Fatalf("got %v, want an explanation of the unreachable dir", err)
	}
}

func TestPortTaken(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{`broker/rabbitmq-server exited before ready: exit status 1
log tail:
{"init terminating in do_boot",{error,{could_not_start_listener,"127.0.0.1",35623,{listen_error,{acceptor,{127,0,0,1},35623},eaddrinuse}}}}`, true},
		{"LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use", true},
		{"Could not create server TCP listening socket 127.0.0.1:6379: bind: Address already in use", true},
		{"listen tcp 127.0.0.1:27017: bind: address already in use", true},
		{"postgres exited before ready: exit status 1\nFATAL:  data directory has wrong ownership", false},
		{"redis-server not found: apt-get install redis-server", false},
	}
	for _, tt := range tests {
		if got := portTaken(errors.New(tt.msg)); got != tt.want {
			t.Errorf("portTaken(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

// A start that lost its port is tried again, up to portTries times, and
// only when its ports are drawn afresh; any other failure ends it at once.
func TestRetryTakenTriesAgainOnlyForATakenPort(t *testing.T) {
	taken := errors.New("start redis: bind: Address already in use")
	other := errors.New("start redis: redis-server not found")
	tests := []struct {
		name  string
		free  bool
		errs  []error // what each try returns; nil: success
		tries int
		ok    bool
	}{
		{"first try", true, []error{nil}, 1, true},
		{"taken, then started", true, []error{taken, nil}, 2, true},
		{"taken every time", true, []error{taken, taken, taken, nil}, portTries, false},
		{"another failure", true, []error{other, nil}, 1, false},
		{"a port given by Listen", false, []error{taken, nil}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			in, err := retryTaken(context.Background(), tt.free, func() (*Instance, error) {
				err := tt.errs[tries]
				tries++
				if err != nil {
					return nil, err
				}
				return &Instance{}, nil
			})
			if tries != tt.tries || (err == nil) != tt.ok || (in != nil) != tt.ok {
				t.Fatalf("%d tries, instance %v, error %v; want %d tries, success %v", tries, in, err, tt.tries, tt.ok)
			}
		})
	}
}
