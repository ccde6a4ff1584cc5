package deps

import (
	"context"
	"fmt"
	"net"
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

// A real server that cannot bind its port says so in words portTaken
// knows, and a port given by Listen is not tried again.
func TestRedisOnATakenPortSaysSo(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	in, err := Start(context.Background(), Redis, Options{Listen: held.Addr().String()})
	if err == nil {
		in.Stop()
		t.Fatal("redis started on a port another listener holds")
	}
	if !portTaken(err) {
		t.Fatalf("the error does not say the port was taken: %v", err)
	}
}
