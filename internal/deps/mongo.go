package deps

import (
	"context"
	"fmt"
	"path/filepath"

	mongodriver "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/msbench/msbench/internal/checkout"
)

// mongo serves the MongoDB wire protocol with FerretDB, because Debian
// packages no MongoDB server. The program is msbench's own tools/ferretdb,
// a separate Go module so that FerretDB's dependencies stay out of
// msbench's. Its store is a private PostgreSQL on a port of its own, not
// FerretDB's SQLite backend: that one answers a lookup by _id by parsing
// every document's JSON text (about 8 ms of CPU a lookup over a thousand
// documents of a few KB). PostgreSQL reads its binary JSONB about ten
// times cheaper, though still row by row: FerretDB pushes {_id: x} down as
// JSONB containment, which its btree _id index cannot answer. The
// instance's processes are FerretDB and its PostgreSQL, accounted, paused
// and killed together.
type mongo struct {
	server string
	store  postgres
}

const ferretDBSource = "tools/ferretdb" // in the checkout

func (s *mongo) find(ctx context.Context, e *env) error {
	if err := s.store.find(ctx, e); err != nil {
		return fmt.Errorf("the MongoDB stand-in stores its documents in PostgreSQL: %w", err)
	}
	if e.binDir != "" {
		var err error
		s.server, err = program(e, "ferretdb", fmt.Sprintf("build it with (cd %s && go build -o %s .)", ferretDBSource, filepath.Join(e.binDir, "ferretdb")))
		return err
	}
	root, err := checkout.Root(e.root)
	if err != nil {
		return fmt.Errorf("the MongoDB stand-in is built from the checkout's %s: %w", ferretDBSource, err)
	}
	s.server, err = buildFerretDB(ctx, root)
	return err
}

func (s *mongo) init(ctx context.Context, e *env) error {
	var err error
	if s.store.port, err = e.ports.Next(); err != nil {
		return err
	}
	return s.store.init(ctx, e)
}

func (s *mongo) url(e *env) string { return "mongodb://" + e.addr() + "/" }

// Mongo creates a database on its first write; msbench is the name to use.
func (*mongo) keys() []string { return []string{"database"} }

func (s *mongo) values(*env) map[string]string { return map[string]string{"database": dbName} }

func (s *mongo) launches(e *env) []launch {
	// FerretDB keeps each MongoDB database as a schema of the store's
	// database msbench.
	spec := e.spec("ferretdb", s.server, "-listen", e.addr(), "-postgresql", s.store.url(e))
	// The driver's monitor waits 500 ms before retrying a refused
	// connection.
	ready := whenListening(e.addr(), func(ctx context.Context) error { return s.ping(ctx, e) })
	return append(s.store.launches(e), launch{spec: spec, ready: ready})
}

// The store's shared memory outlives a killed PostgreSQL as it does when
// PostgreSQL is a dependency of its own.
func (s *mongo) settle(ctx context.Context, e *env) error { return s.store.settle(ctx, e) }
func (s *mongo) release(e *env) error                     { return s.store.release(e) }
func (s *mongo) lease(e *env)                             { s.store.lease(e) }

func (s *mongo) ping(ctx context.Context, e *env) error {
	c, err := mongodriver.Connect(ctx, options.Client().ApplyURI(s.url(e)))
	if err != nil {
		return err
	}
	defer c.Disconnect(context.WithoutCancel(ctx))
	return c.Ping(ctx, nil)
}
