package deps

import (
	"context"
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The test's queue is transient, so nothing is expected to survive a
// restart.
func TestRabbitMQ(t *testing.T) {
	testLifecycle(t, RabbitMQ, client{server: "rabbitmq-server", use: rabbitUse})
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
