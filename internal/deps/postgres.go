package deps

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/proc"
)

// postgres runs PostgreSQL's server binary directly, as the system user
// postgres because it refuses to run as root, with a cluster made by initdb
// whose only login role is the superuser msbench, with the instance's password.
type postgres struct {
	initdb, server string
	data, password string
	leased         []segment // shared memory recorded in the lease, one per start
	// port is the server's own when it backs another kind (FerretDB's
	// store) and the instance's port is that kind's; zero means the
	// instance's.
	port int
}

func (s *postgres) listenPort(e *env) int {
	if s.port != 0 {
		return s.port
	}
	return e.port
}

// listenHost is the instance's host, but loopback for FerretDB's store,
// which only FerretDB uses.
func (s *postgres) listenHost(e *env) string {
	if s.port != 0 {
		return loopback
	}
	return e.host
}

func (s *postgres) find(_ context.Context, e *env) error {
	var err error
	if s.server, err = program(e, "postgres", debian("postgresql"), "/usr/lib/postgresql/*/bin"); err != nil {
		return err
	}
	// initdb must be of the server's version.
	s.initdb, err = program(e, "initdb", debian("postgresql"), filepath.Dir(s.server))
	return err
}

func (s *postgres) init(ctx context.Context, e *env) error {
	var err error
	if s.data, err = e.userDir("data", "postgres"); err != nil {
		return err
	}
	s.password = e.password()
	// initdb runs as postgres and needs the file only while it runs.
	pwFile := e.path("pwfile")
	if err := writeSecret(pwFile, s.password+"\n", "postgres"); err != nil {
		return err
	}
	defer os.Remove(pwFile)
	// SCRAM for every connection, as a packaged or containerised
	// PostgreSQL has it, not initdb's "trust": no role is open, and
	// connection set-up costs what it costs in the studies. --no-sync only
	// skips initdb's own final fsync.
	spec := e.spec("initdb", s.initdb, "-D", s.data, "-U", dbUser, "--pwfile", pwFile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C.UTF-8", "--no-sync")
	spec.User = "postgres"
	if err := runOnce(ctx, spec); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	if s.listenHost(e) != loopback {
		return openHBA(s.data)
	}
	return nil
}

func (s *postgres) url(e *env) string { return s.urlFor(e, dbName) }

func (s *postgres) urlFor(e *env, db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", dbUser, s.password,
		net.JoinHostPort(s.listenHost(e), strconv.Itoa(s.listenPort(e))), db)
}

func (*postgres) keys() []string { return credentialKeys }

func (s *postgres) values(*env) map[string]string { return credentials(s.password) }

func (s *postgres) launches(e *env) []launch {
	spec := e.spec("postgres", s.server, "-D", s.data, "-p", strconv.Itoa(s.listenPort(e)),
		"-c", "listen_addresses="+s.listenHost(e),
		// TCP only: a socket path in the private dir could exceed the
		// length limit of Unix socket names.
		"-c", "unix_socket_directories=")
	spec.User = "postgres"
	return []launch{{
		spec:  spec,
		ready: proc.FuncCheck(func(ctx context.Context) error { return s.ensureDatabase(ctx, e) }),
		// SIGTERM is a "smart" shutdown that waits for clients to
		// disconnect; SIGINT is the fast one that disconnects them.
		stop: syscall.SIGINT,
	}}
}

// ensureDatabase connects through the maintenance database "postgres"
// and creates the database msbench on the first start.
func (s *postgres) ensureDatabase(ctx context.Context, e *env) error {
	conn, err := pgx.Connect(ctx, s.urlFor(e, "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", dbName).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+dbName)
	return err
}
