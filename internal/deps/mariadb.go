package deps

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/msbench/msbench/internal/proc"
)

// mariadb runs mariadbd as the system user mysql with no option file
// (--no-defaults), so with MariaDB's built-in defaults rather than the
// host's /etc/mysql.
type mariadb struct {
	installDB, server   string
	data, tmp, password string
}

// mariadbSetup runs once, in the bootstrap server of mariadb-install-db,
// with the password of the user msbench. Grant tables are only loaded after
// FLUSH PRIVILEGES there.
const mariadbSetup = `FLUSH PRIVILEGES;
CREATE DATABASE ` + dbName + `;
CREATE USER '` + dbUser + `'@'%%' IDENTIFIED BY '%s';
GRANT ALL PRIVILEGES ON *.* TO '` + dbUser + `'@'%%';
`

func (s *mariadb) find(_ context.Context, e *env) error {
	var err error
	if s.server, err = program(e, "mariadbd", debian("mariadb-server"), "/usr/sbin"); err != nil {
		return err
	}
	s.installDB, err = program(e, "mariadb-install-db", debian("mariadb-server"), "/usr/bin")
	return err
}

func (s *mariadb) init(ctx context.Context, e *env) error {
	var err error
	if s.data, err = e.userDir("data", "mysql"); err != nil {
		return err
	}
	// InnoDB's temporary files go to TMPDIR, which the mysql user may not
	// write to (a TMPDIR of msbench's own); a private one it owns.
	if s.tmp, err = e.userDir("tmp", "mysql"); err != nil {
		return err
	}
	s.password = e.password()
	// mariadb-install-db, which runs as msbench's user, reads it.
	setup := e.path("setup.sql")
	if err := writeSecret(setup, fmt.Sprintf(mariadbSetup, s.password), ""); err != nil {
		return err
	}
	defer os.Remove(setup)
	// No test database. root and mysql authenticate by unix_socket only,
	// i.e. as those system users on the server's socket: over TCP they
	// are refused, and only msbench's own user is open, by password.
	spec := e.spec("mariadb-install-db", s.installDB, "--no-defaults", "--user=mysql", "--datadir="+s.data,
		"--skip-test-db", "--auth-root-authentication-method=socket", "--extra-file="+setup)
	spec.Env = append(spec.Env, "TMPDIR="+s.tmp)
	if err := runOnce(ctx, spec); err != nil {
		return fmt.Errorf("mariadb-install-db: %w", err)
	}
	return nil
}

// url is the URL form that most client libraries take; values has the Go
// driver's DSN as dsn.
func (s *mariadb) url(e *env) string {
	return fmt.Sprintf("mysql://%s:%s@%s/%s", dbUser, s.password, e.addr(), dbName)
}

func (s *mariadb) dsn(e *env) string { return s.config(e).FormatDSN() }

func (s *mariadb) config(e *env) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = dbUser, s.password, "tcp", e.addr(), dbName
	return cfg
}

func (*mariadb) keys() []string { return append(slices.Clone(credentialKeys), "dsn") }

func (s *mariadb) values(e *env) map[string]string {
	v := credentials(s.password)
	v["dsn"] = s.dsn(e)
	return v
}

func (s *mariadb) launches(e *env) []launch {
	spec := e.spec("mariadbd", s.server, "--no-defaults", "--datadir="+s.data,
		"--port="+strconv.Itoa(e.port), "--bind-address="+e.host,
		// Relative to the data dir, which mysql may write to, and short:
		// an absolute socket path in a deep private dir can exceed the
		// 107-byte limit of Unix socket names.
		"--socket=mariadbd.sock", "--pid-file=mariadbd.pid", "--tmpdir="+s.tmp)
	spec.User = "mysql"
	return []launch{{spec: spec, ready: proc.FuncCheck(func(ctx context.Context) error { return s.ping(ctx, e) })}}
}

func (s *mariadb) ping(ctx context.Context, e *env) error {
	cfg := s.config(e)
	// A server still starting resets connections, which the driver would
	// log on msbench's stderr; the check's own error says enough.
	cfg.Logger = discardLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	return db.PingContext(ctx)
}

type discardLogger struct{}

func (discardLogger) Print(...any) {}
