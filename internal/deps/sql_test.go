package deps

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sys/unix"
)

func TestPostgres(t *testing.T) {
	c := sqlClient("postgres", "pgx", func(in *Instance) string { return in.URL }, "$1")
	c.login, c.refused, c.user = postgresLogin, "password authentication failed", "postgres"
	c.strangers = []login{{"postgres", ""}, {"postgres", "postgres"}}
	testLifecycle(t, Postgres, c)
}

func TestMariaDB(t *testing.T) {
	c := sqlClient("mariadbd", "mysql", func(in *Instance) string { return in.Values["dsn"] }, "?")
	c.login, c.refused, c.user = mariadbLogin, "Access denied", "mysql"
	c.strangers = []login{{"root", ""}, {"root", "root"}, {"mysql", ""}}
	testLifecycle(t, MariaDB, c)
}

func postgresLogin(ctx context.Context, in *Instance, user, password string) error {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: in.Addr, Path: "/" + dbName, RawQuery: "sslmode=disable"}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// mariadbLogin names no database, so that only the credentials count.
func mariadbLogin(ctx context.Context, in *Instance, user, password string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.Logger = user, password, "tcp", in.Addr, discardLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	return db.PingContext(ctx)
}

// sqlClient keeps rows in a table kv of the server program through
// database/sql with driver, whose parameter marker is param. Rows survive
// restarts.
func sqlClient(server, driver string, dsn func(*Instance) string, param string) client {
	read := func(ctx context.Context, db *sql.DB, key string) error {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM kv WHERE k = "+param, key).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%d rows with key %q, want 1", n, key)
		}
		return nil
	}
	with := func(in *Instance, f func(*sql.DB) error) error {
		db, err := sql.Open(driver, dsn(in))
		if err != nil {
			return err
		}
		defer db.Close()
		return f(db)
	}
	return client{
		server: server,
		use: func(ctx context.Context, in *Instance, key string) error {
			return with(in, func(db *sql.DB) error {
				if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS kv (k VARCHAR(64) PRIMARY KEY)"); err != nil {
					return err
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES ("+param+")", key); err != nil {
					return err
				}
				return read(ctx, db, key)
			})
		},
		has: func(ctx context.Context, in *Instance, key string) error {
			return with(in, func(db *sql.DB) error { return read(ctx, db, key) })
		},
	}
}

// A killed server's System V shared memory, which lives outside the private
// dir, is freed by Stop.
func TestPostgresKilledLeavesNoSharedMemory(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	in := startForTest(ctx, t, Postgres)
	ids := in.srv.(*postgres).segments()
	if len(ids) == 0 {
		t.Fatal("found no shared memory segment of the running server")
	}
	for _, p := range in.Processes() {
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
	}
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, seg := range ids {
		var desc unix.SysvShmDesc
		if _, err := unix.SysvShmCtl(seg.id, unix.IPC_STAT, &desc); err == nil {
			t.Errorf("shared memory segment %d still exists after Stop (%d attached)", seg.id, desc.Nattch)
		}
	}
}
