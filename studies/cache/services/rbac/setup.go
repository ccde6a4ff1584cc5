package main

import (
	"context"
	_ "embed"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"
)

//go:embed schema.sql
var schema string

// setupLock is the advisory lock key under which one instance creates and
// seeds the tables while the others starting beside it wait: concurrent
// CREATE TABLE IF NOT EXISTS can still fail, and two seeds would collide.
const setupLock = 0x6d7362656e6368 // "msbench"

// setup creates the tables if missing and seeds them if empty. It runs on a
// connection of its own, outside the pool, so that db_queries counts only
// what requests cost.
func setup(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setupLock); err != nil {
			return fmt.Errorf("take the setup lock: %w", err)
		}
		if _, err := tx.Exec(ctx, schema); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		var empty bool
		if err := tx.QueryRow(ctx, "SELECT NOT EXISTS (SELECT 1 FROM roles)").Scan(&empty); err != nil {
			return fmt.Errorf("look for roles: %w", err)
		}
		if empty {
			if err := seed(ctx, tx); err != nil {
				return err
			}
		}
		// Without statistics (autovacuum gathers them a minute or so after
		// the seed) the planner guesses millions of rows for the snapshot
		// query and JIT-compiles it, which costs ~200 ms on every read.
		if _, err := tx.Exec(ctx, "ANALYZE roles, permissions, role_permissions, data_version"); err != nil {
			return fmt.Errorf("analyze tables: %w", err)
		}
		return nil
	})
}

// seed inserts seedData.
func seed(ctx context.Context, tx pgx.Tx) error {
	roles, perms := seedData()
	var roleRows, permRows, grantRows [][]any
	for _, p := range perms {
		permRows = append(permRows, []any{p.ID, p.Name})
	}
	for _, r := range roles {
		roleRows = append(roleRows, []any{r.ID, r.Name})
		for _, p := range r.Permissions {
			grantRows = append(grantRows, []any{r.ID, p.ID})
		}
	}
	for _, c := range []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"roles", []string{"id", "name"}, roleRows},
		{"permissions", []string{"id", "name"}, permRows},
		{"role_permissions", []string{"role_id", "permission_id"}, grantRows},
	} {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("seed %s: %w", c.table, err)
		}
	}
	log.Printf("seeded %d roles, %d permissions, %d grants", len(roleRows), len(permRows), len(grantRows))
	return nil
}
