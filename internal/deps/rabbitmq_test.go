package deps

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The test's queue is transient, so nothing is expected to survive a
// restart.
func TestRabbitMQ(t *testing.T) {
	testLifecycle(t, RabbitMQ, client{
		server: "rabbitmq-server", use: rabbitUse,
		login: rabbitLogin, refused: "username or password not allowed", strangers: []login{{"guest", "guest"}},
	})
}

func rabbitLogin(ctx context.Context, in *Instance, user, password string) error {
	u := url.URL{Scheme: "amqp", User: url.UserPassword(user, password), Host: in.Addr, Path: "/"}
	conn, _, err := dialChannel(ctx, u.String())
	if err != nil {
		return err
	}
	return conn.Close()
}

func rabbitUse(ctx context.Context, in *Instance, key string) error {
	conn, ch, err := dialChannel(ctx, in.URL)
	if err != nil {
		return err
	}
	defer conn.Close()
	q, err := ch.QueueDeclare("test-"+key, false, true, false, false, nil)
	if err != nil {
		return err
	}
	deliveries, err := ch.Consume(q.Name, "", true, false, false, false, nil)
	if err != nil {
		return err
	}
	if err := ch.PublishWithContext(ctx, "", q.Name, false, false, amqp.Publishing{Body: []byte(key)}); err != nil {
		return err
	}
	select {
	case d := <-deliveries:
		if string(d.Body) != key {
			return fmt.Errorf("consumed %q, want %q", d.Body, key)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no message consumed: %w", ctx.Err())
	}
}

// The broker reads the instance's configuration alone, not the files a
// system (a standard image's /etc/rabbitmq/conf.d) would add: here those
// the environment names, one with a setting RabbitMQ refuses to boot on.
func TestRabbitMQReadsNoSystemConfigFiles(t *testing.T) {
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "10-system.conf"), []byte("no_such_setting = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RABBITMQ_CONFIG_FILES", conf)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	in := startForTest(ctx, t, RabbitMQ)
	if err := rabbitUse(ctx, in, "alone"); err != nil {
		t.Fatal(err)
	}
}
