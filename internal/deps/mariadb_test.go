package deps

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/go-sql-driver/mysql"
)

func TestMariaDB(t *testing.T) {
	testLifecycle(t, MariaDB, client{use: mariaUse, has: mariaHas})
}

func mariaUse(ctx context.Context, in *Instance, key string) error {
	return withMaria(in, func(db *sql.DB) error {
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS kv (k VARCHAR(64) PRIMARY KEY)"); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO kv VALUES (?)", key); err != nil {
			return err
		}
		return mariaRead(ctx, db, key)
	})
}

func mariaHas(ctx context.Context, in *Instance, key string) error {
	return withMaria(in, func(db *sql.DB) error { return mariaRead(ctx, db, key) })
}

func withMaria(in *Instance, f func(*sql.DB) error) error {
	db, err := sql.Open("mysql", in.Values["dsn"])
	if err != nil {
		return err
	}
	defer db.Close()
	return f(db)
}

func mariaRead(ctx context.Context, db *sql.DB, key string) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM kv WHERE k = ?", key).Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d rows with key %q, want 1", n, key)
	}
	return nil
}
