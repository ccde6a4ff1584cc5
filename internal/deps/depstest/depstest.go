// Package depstest starts real dependencies for tests of the systems under
// test: each test gets servers of its own, stopped when it ends.
package depstest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
)

// Start starts a dependency for the rest of the test.
func Start(ctx context.Context, t testing.TB, kind deps.Kind, name string, ports *proc.PortAllocator) *deps.Instance {
	t.Helper()
	// Not t.TempDir: its parents are private to root, and Postgres and
	// MariaDB run as their own system users.
	dir, err := os.MkdirTemp("", "msbench-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Leased as deps leases its own dirs: a test binary killed by its
	// timeout runs no cleanup, and the next msbench takes the dir back.
	lease.Take(lease.Dir, dir)
	t.Cleanup(func() {
		if os.RemoveAll(dir) == nil {
			lease.Release(lease.Dir, dir)
		}
	})
	in, err := deps.Start(ctx, kind, deps.Options{
		Name: name, Dir: filepath.Join(dir, "instance"), LogDir: filepath.Join(dir, "logs"), Ports: ports,
	})
	if err != nil {
		t.Fatalf("start %s: %v", kind, err)
	}
	t.Cleanup(func() {
		if err := in.Stop(); err != nil {
			t.Errorf("stop %s: %v", kind, err)
		}
	})
	t.Logf("%s ready in %s", kind, in.StartupTime.Round(time.Millisecond))
	return in
}

// CreateDatabase gives a service a Postgres database of its own, so that
// services tested in parallel do not see each other's rows, and returns its
// URL and a connection for checking what the service stored.
func CreateDatabase(ctx context.Context, t testing.TB, pg *deps.Instance, name string) (string, *pgx.Conn) {
	t.Helper()
	admin, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatalf("connect to postgres: %v", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	u := url.URL{
		Scheme: "postgres", User: url.UserPassword(pg.Values["user"], pg.Values["password"]),
		Host: pg.Addr, Path: "/" + name, RawQuery: "sslmode=disable",
	}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatalf("connect to %s: %v", name, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return u.String(), conn
}
