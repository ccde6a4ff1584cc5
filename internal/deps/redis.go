package deps

import (
	"context"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// redis runs redis-server without a config file, so with its built-in
// defaults except what keeps it private: loopback only, and no snapshot
// or append-only file, which would be written outside a run's control.
type redis struct {
	server string
}

func (s *redis) find(_ context.Context, e *env) error {
	var err error
	s.server, err = program(e, "redis-server", debian("redis-server"))
	return err
}

func (s *redis) init(context.Context, *env) error { return nil }

func (s *redis) url(e *env) string { return "redis://" + e.addr() + "/0" }

func (s *redis) values(*env) map[string]string { return nil }

func (s *redis) launches(e *env) []launch {
	spec := e.spec("redis-server", s.server, "--port", strconv.Itoa(e.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", e.dir)
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
