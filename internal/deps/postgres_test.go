package deps

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestPostgres(t *testing.T) {
	testLifecycle(t, Postgres, client{use: pgUse, has: pgHas})
}

func pgUse(ctx context.Context, in *Instance, key string) error {
	return withPG(ctx, in, func(conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS kv (k text PRIMARY KEY)"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "INSERT INTO kv VALUES ($1)", key); err != nil {
			return err
		}
		return pgRead(ctx, conn, key)
	})
}

func pgHas(ctx context.Context, in *Instance, key string) error {
	return withPG(ctx, in, func(conn *pgx.Conn) error { return pgRead(ctx, conn, key) })
}

func withPG(ctx context.Context, in *Instance, f func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, in.URL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return f(conn)
}

func pgRead(ctx context.Context, conn *pgx.Conn, key string) error {
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM kv WHERE k = $1", key).Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d rows with key %q, want 1", n, key)
	}
	return nil
}
