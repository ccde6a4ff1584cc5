package deps

import (
	"context"
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// Redis runs without persistence, as the cache study's did, so nothing is
// expected to survive a restart.
func TestRedis(t *testing.T) {
	testLifecycle(t, Redis, client{
		server: "redis-server", use: redisUse,
		login: redisLogin, refused: "WRONGPASS|NOAUTH", strangers: []login{{"default", ""}},
		user: "redis", secrets: []string{"data/redis.conf"},
	})
}

func redisLogin(ctx context.Context, in *Instance, user, password string) error {
	c := goredis.NewClient(&goredis.Options{Addr: in.Addr, Username: user, Password: password, MaxRetries: -1})
	defer c.Close()
	return c.Ping(ctx).Err()
}

func redisUse(ctx context.Context, in *Instance, key string) error {
	opts, err := goredis.ParseURL(in.URL)
	if err != nil {
		return err
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	if err := c.Set(ctx, key, "v-"+key, 0).Err(); err != nil {
		return err
	}
	got, err := c.Get(ctx, key).Result()
	if err != nil {
		return err
	}
	if got != "v-"+key {
		return fmt.Errorf("GET %s = %q, want %q", key, got, "v-"+key)
	}
	return nil
}
