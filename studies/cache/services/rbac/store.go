package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// dbTimeout bounds every read and mutation, waiting for a pooled
	// connection included, so a database that hangs (paused) costs a client
	// 503 after this long, not forever. A database that is down refuses
	// connections, which is answered 503 at once.
	dbTimeout = 5 * time.Second
	// connectTimeout bounds dialling and authenticating, unless
	// DATABASE_URL sets connect_timeout.
	connectTimeout = 2 * time.Second
)

var (
	errNoRole       = errors.New("no such role")
	errNoPermission = errors.New("no such permission")
	errNameTaken    = errors.New("another role has this name")
)

// unavailableClasses are the SQLSTATE classes of a server that cannot serve
// rather than one that refused the statement: connection exception,
// insufficient resources, operator intervention (e.g. shutting down).
var unavailableClasses = []string{"08", "53", "57"}

// store reads and changes the tables (schema.sql) through a pool.
type store struct {
	pool   *pgxpool.Pool
	outage outage
}

// openStore creates and seeds the tables if needed, then opens the pool,
// whose every statement counts in queries.
func openStore(ctx context.Context, databaseURL string, queries *atomic.Int64) (*store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if err := setup(ctx, cfg.ConnConfig.Copy()); err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = queryCounter{queries}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	return &store{pool: pool, outage: outage{name: "postgres"}}, nil
}

// loadQuery reads a whole snapshot in one statement, so in one MVCC
// snapshot: the version and one row per grant, ordered as served. A role
// without permissions gives one row whose permission columns are NULL.
const loadQuery = `
SELECT v.version, r.id, r.name, p.id, p.name
FROM data_version v
LEFT JOIN roles r ON true
LEFT JOIN role_permissions rp ON rp.role_id = r.id
LEFT JOIN permissions p ON p.id = rp.permission_id
ORDER BY r.id, p.id`

func (s *store) load(ctx context.Context) (*snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	snap := &snapshot{Roles: []role{}}
	var (
		roleID, permID     *int64
		roleName, permName *string
	)
	rows, _ := s.pool.Query(ctx, loadQuery) // ForEachRow reports the query's error
	_, err := pgx.ForEachRow(rows, []any{&snap.Version, &roleID, &roleName, &permID, &permName}, func() error {
		if roleID == nil {
			return nil
		}
		if n := len(snap.Roles); n == 0 || snap.Roles[n-1].ID != *roleID {
			snap.Roles = append(snap.Roles, role{ID: *roleID, Name: *roleName, Permissions: []permission{}})
		}
		if permID != nil {
			r := &snap.Roles[len(snap.Roles)-1]
			r.Permissions = append(r.Permissions, permission{ID: *permID, Name: *permName})
		}
		return nil
	})
	if err := s.observe(err); err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	return snap, nil
}

// grant gives role roleID permission permID, if it has not got it yet, and
// returns the new data version.
func (s *store) grant(ctx context.Context, roleID, permID int64) (int64, error) {
	v, err := s.mutate(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if err := mustExist(ctx, tx, roleID, permID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO role_permissions (role_id, permission_id) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, roleID, permID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("grant permission %d to role %d: %w", permID, roleID, err)
	}
	return v, nil
}

// revoke takes permission permID from role roleID, if it has it, and
// returns the new data version.
func (s *store) revoke(ctx context.Context, roleID, permID int64) (int64, error) {
	v, err := s.mutate(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if err := mustExist(ctx, tx, roleID, permID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM role_permissions WHERE role_id = $1 AND permission_id = $2", roleID, permID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoke permission %d from role %d: %w", permID, roleID, err)
	}
	return v, nil
}

// rename names role id name and returns the new data version.
func (s *store) rename(ctx context.Context, id int64, name string) (int64, error) {
	v, err := s.mutate(ctx, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE roles SET name = $2 WHERE id = $1", id, name)
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation
			return errNameTaken
		case err != nil:
			return err
		case tag.RowsAffected() == 0:
			return errNoRole
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rename role %d: %w", id, err)
	}
	return v, nil
}

// mutate runs change and bumps data_version in one transaction, so a
// version number names exactly one state of the tables, and returns the
// new version. The row lock on data_version orders mutations: versions
// follow commit order.
func (s *store) mutate(ctx context.Context, change func(context.Context, pgx.Tx) error) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	var version int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := change(ctx, tx); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "UPDATE data_version SET version = version + 1 RETURNING version").Scan(&version)
	})
	return version, s.observe(err)
}

// mustExist returns errNoRole or errNoPermission for an unknown id.
func mustExist(ctx context.Context, tx pgx.Tx, roleID, permID int64) error {
	var roleOK, permOK bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM roles WHERE id = $1),
		EXISTS (SELECT 1 FROM permissions WHERE id = $2)`, roleID, permID).Scan(&roleOK, &permOK)
	switch {
	case err != nil:
		return err
	case !roleOK:
		return errNoRole
	case !permOK:
		return errNoPermission
	}
	return nil
}

// observe logs when Postgres stops and starts answering, and passes err on.
func (s *store) observe(err error) error {
	if unavailable(err) {
		s.outage.failed(err)
	} else {
		s.outage.answered()
	}
	return err
}

// unavailable tells a database that could not answer (connection refused
// or lost, timeout, shutting down) from one that answered, if with an
// error, and from a read cancelled because its client left.
func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) ||
		errors.Is(err, errNoRole) || errors.Is(err, errNoPermission) || errors.Is(err, errNameTaken) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return slices.Contains(unavailableClasses, pgErr.Code[:2])
	}
	return true
}

// mayHaveCommitted tells whether a failed mutation may have committed all
// the same: the connection failed after statements went out, so only the
// answer may have been lost.
func mayHaveCommitted(err error) bool {
	return unavailable(err) && !pgconn.SafeToRetry(err)
}

func (s *store) close() { s.pool.Close() }

// queryCounter counts every statement the pool sends (BEGIN and COMMIT
// included, pings not) for /stats: a GET /roles miss costs exactly one.
type queryCounter struct{ n *atomic.Int64 }

func (c queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
