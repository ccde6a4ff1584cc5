package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/msbench/msbench/internal/deppod"
	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// dependency starts `msbench dependency args...` with env added.
func dependency(t *testing.T, env []string, args ...string) (*exec.Cmd, io.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(msbenchBinary(t), append([]string{"dependency"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdout, stderr
}

// nextEvent reads the agent's next line, within limit.
func nextEvent(t *testing.T, dec *json.Decoder, stderr *strings.Builder, limit time.Duration) deppod.Event {
	t.Helper()
	got := make(chan error, 1)
	var e deppod.Event
	go func() { got <- dec.Decode(&e) }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("no event: %v; stderr:\n%s", err, stderr)
		}
	case <-time.After(limit):
		t.Fatalf("no event within %v; stderr:\n%s", limit, stderr)
	}
	return e
}

// The command as a pod runs it, on loopback: the password from the
// environment serves a real client, the values hold it nowhere, SIGUSR1
// restarts the server keeping what was written, and SIGTERM stops it
// cleanly, leaving no process and no directory.
func TestDependencyCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts database servers")
	}
	tests := []struct {
		kind string
		// use writes key (once) and reads it back with values' URL or DSN.
		use  func(ctx context.Context, values map[string]string, key string, write bool) error
		keep bool // what was written survives a restart
	}{
		{"postgres", usePostgres, true},
		{"redis", useRedis, false},
		{"rabbitmq", useRabbitMQ, false},
		{"mariadb", useMariaDB, true},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			port, err := new(proc.PortAllocator).Next()
			if err != nil {
				t.Fatal(err)
			}
			listen := "127.0.0.1:" + strconv.Itoa(port)
			dir := filepath.Join(os.TempDir(), "dependency-"+tt.kind+"-"+rand.Text()[:8])
			password := rand.Text()
			cmd, stdout, stderr := dependency(t, []string{deppod.PasswordEnv + "=" + password},
				tt.kind, "--listen", listen, "--dir", dir)
			dec := json.NewDecoder(stdout)
			ready := nextEvent(t, dec, stderr, 3*time.Minute)
			t.Logf("%s ready in %.1fs", tt.kind, ready.Seconds)
			if ready.Event != "ready" || string(ready.Kind) != tt.kind || ready.Addr != listen {
				t.Fatalf("first event %+v, want %s ready on %s", ready, tt.kind, listen)
			}
			for k, v := range ready.Values {
				if strings.Contains(v, password) {
					t.Errorf("value %s shows the password", k)
				}
			}
			if ready.Values["password"] != deppod.PasswordPlaceholder {
				t.Errorf("password value %q, want %q", ready.Values["password"], deppod.PasswordPlaceholder)
			}
			items := held(t, cmd.Process.Pid)
			assertNotInEnviron(t, items, password)
			values := ready.Resolve(password)
			if err := tt.use(ctx, values, "k1", true); err != nil {
				t.Fatalf("use %s with the values: %v", tt.kind, err)
			}
			if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			if e := nextEvent(t, dec, stderr, 3*time.Minute); e.Event != "restarted" || e.Addr != listen {
				t.Fatalf("after SIGUSR1: %+v, want restarted on %s", e, listen)
			}
			if err := tt.use(ctx, values, "k1", !tt.keep); err != nil {
				t.Fatalf("use %s after the restart: %v", tt.kind, err)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// A pod's grace period is 30 s by default.
			if code, took := exitWithin(t, cmd, 30*time.Second); code != 0 {
				t.Errorf("exit %d after SIGTERM (%v); stderr:\n%s", code, took, stderr)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s is left: %v", dir, err)
			}
			assertReleased(t, cmd.Process.Pid, items)
		})
	}
}

// assertNotInEnviron checks that no process of the groups in items has
// secret in its environment, which its user (mysql, postgres) could read.
func assertNotInEnviron(t *testing.T, items []lease.Item, secret string) {
	t.Helper()
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, it := range items {
		if it.Kind != lease.Group {
			continue
		}
		pgid, _, err := lease.ParseGroup(it.Value)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range stats {
			if st.PGRP != pgid || st.Dead() {
				continue
			}
			seen++
			if environ, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(st.PID), "environ")); strings.Contains(string(environ), secret) {
				t.Errorf("process %d (%s) has the password in its environment", st.PID, st.Comm)
			}
		}
	}
	if seen == 0 {
		t.Errorf("no server process found in %v, so none was checked", items)
	}
}

// A password that is missing or could break the servers' set-up is refused
// before anything starts, naming the variable and not showing the value.
func TestDependencyRefusesBadPassword(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"missing", "", "needs its account's password in the environment variable " + deppod.PasswordEnv},
		{"empty", deppod.PasswordEnv + "=", "needs its account's password"},
		{"short", deppod.PasswordEnv + "=abc123", "at least 16"},
		{"quote", deppod.PasswordEnv + "=abcdefghijklmnop'", "other than a letter or digit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "never")
			var env []string
			if tt.env != "" {
				env = []string{tt.env}
			}
			cmd, stdout, stderr := dependency(t, env, "postgres", "--listen", "127.0.0.1:1", "--dir", dir)
			out, _ := io.ReadAll(stdout)
			code, _ := exitWithin(t, cmd, time.Minute)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) || len(out) > 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, tt.want)
			}
			if _, value, _ := strings.Cut(tt.env, "="); value != "" && strings.Contains(stderr.String(), value) {
				t.Errorf("the error shows the password: %s", stderr)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s was made", dir)
			}
		})
	}
}

func usePostgres(ctx context.Context, values map[string]string, key string, write bool) error {
	conn, err := pgx.Connect(ctx, values["url"])
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if write {
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS kv (k text PRIMARY KEY, v text)"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "INSERT INTO kv VALUES ($1, $1)", key); err != nil {
			return err
		}
	}
	var v string
	return conn.QueryRow(ctx, "SELECT v FROM kv WHERE k = $1", key).Scan(&v)
}

func useMariaDB(ctx context.Context, values map[string]string, key string, write bool) error {
	cfg, err := mysql.ParseDSN(values["dsn"])
	if err != nil {
		return err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	if write {
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS kv (k varchar(64) PRIMARY KEY, v text)"); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES (?, ?)", key, key); err != nil {
			return err
		}
	}
	var v string
	return db.QueryRowContext(ctx, "SELECT v FROM kv WHERE k = ?", key).Scan(&v)
}

func useRedis(ctx context.Context, values map[string]string, key string, write bool) error {
	opts, err := goredis.ParseURL(values["url"])
	if err != nil {
		return err
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	if write {
		if err := c.Set(ctx, key, key, 0).Err(); err != nil {
			return err
		}
	}
	return c.Get(ctx, key).Err()
}

// useRabbitMQ publishes to a queue and gets the message back; nothing
// outlives a restart, so without write it checks a round trip on a
// fresh queue.
func useRabbitMQ(ctx context.Context, values map[string]string, key string, _ bool) error {
	conn, err := amqp.DialConfig(values["url"], amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}})
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		return err
	}
	if err := ch.PublishWithContext(ctx, "", q.Name, false, false, amqp.Publishing{Body: []byte(key)}); err != nil {
		return err
	}
	for ctx.Err() == nil {
		msg, ok, err := ch.Get(q.Name, true)
		if err != nil || (ok && string(msg.Body) == key) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ctx.Err()
}
