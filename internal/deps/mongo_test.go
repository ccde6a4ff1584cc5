package deps

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/bson"
	mongodriver "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func TestMongo(t *testing.T) {
	testLifecycle(t, Mongo, client{server: "ferretdb", use: mongoUse, has: mongoHas})
}

func mongoUse(ctx context.Context, in *Instance, key string) error {
	return withMongo(ctx, in, func(c *mongodriver.Collection) error {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "k", Value: key}}); err != nil {
			return err
		}
		return mongoRead(ctx, c, key)
	})
}

func mongoHas(ctx context.Context, in *Instance, key string) error {
	return withMongo(ctx, in, func(c *mongodriver.Collection) error { return mongoRead(ctx, c, key) })
}

func withMongo(ctx context.Context, in *Instance, f func(*mongodriver.Collection) error) error {
	client, err := mongodriver.Connect(ctx, options.Client().ApplyURI(in.URL))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	return f(client.Database(in.Values["database"]).Collection("kv"))
}

func mongoRead(ctx context.Context, c *mongodriver.Collection, key string) error {
	var doc struct{ K string }
	if err := c.FindOne(ctx, bson.D{{Key: "k", Value: key}}).Decode(&doc); err != nil {
		return err
	}
	return nil
}
