package deps

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// redis runs redis-server with its built-in defaults except what keeps it
// private: loopback only, a password for the default user, and no snapshot
// or append-only file, which would be written outside a run's control. As
// root, msbench runs it as the system user redis, as the Debian service
// does, rather than as root.
type redis struct {
	server         string
	user           string // empty: msbench's own
	data, password string
}

func (s *redis) find(_ context.Context, e *env) error {
	var err error
	s.server, err = program(e, "redis-server", debian("redis-server"))
	return err
}

func (s *redis) init(_ context.Context, e *env) error {
	var err error
	if os.Geteuid() == 0 {
		s.user = "redis"
		s.data, err = e.userDir("data", s.user)
	} else {
		s.data = e.path("data")
		err = os.Mkdir(s.data, 0o700)
	}
	if err != nil {
		return err
	}
	s.password = e.password()
	// A config file rather than --requirepass, which every local user
	// could read in the command line. Every start reads it, so it stays
	// until Stop removes the private dir.
	return writeSecret(s.config(), "requirepass "+s.password+"\n", s.user)
}

func (s *redis) config() string { return filepath.Join(s.data, "redis.conf") }

func (s *redis) url(e *env) string { return "redis://:" + s.password + "@" + e.addr() + "/0" }

func (*redis) keys() []string { return []string{"password"} }

func (s *redis) values(*env) map[string]string { return map[string]string{"password": s.password} }

func (s *redis) launches(e *env) []launch {
	spec := e.spec("redis-server", s.server, s.config(), "--port", strconv.Itoa(e.port), "--bind", e.host,
		"--save", "", "--appendonly", "no", "--dir", s.data)
	spec.User = s.user
	// go-redis logs every refused dial.
	ready := whenListening(e.addr(), func(ctx context.Context) error { return s.ping(ctx, e) })
	return []launch{{spec: spec, ready: ready}}
}

func (s *redis) ping(ctx context.Context, e *env) error {
	opts, err := goredis.ParseURL(s.url(e))
	if err != nil {
		return err
	}
	// One attempt per check: proc.WaitReady does the retrying.
	opts.MaxRetries = -1
	c := goredis.NewClient(opts)
	defer c.Close()
	return c.Ping(ctx).Err()
}
