package deps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	mongodriver "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/msbench/msbench/internal/checkout"
)

// mongo serves the MongoDB wire protocol with FerretDB on SQLite, because
// Debian packages no MongoDB server. The program is msbench's own
// tools/ferretdb, a separate Go module so that FerretDB's dependencies stay
// out of msbench's.
type mongo struct {
	server string
	data   string
}

const ferretDBSource = "tools/ferretdb" // in the checkout

func (s *mongo) find(ctx context.Context, e *env) error {
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

func (s *mongo) init(_ context.Context, e *env) error {
	s.data = e.path("data")
	return os.Mkdir(s.data, 0o755)
}

func (s *mongo) url(e *env) string { return "mongodb://" + e.addr() + "/" }

// Mongo creates a database on its first write; msbench is the name to use.
func (s *mongo) values(*env) map[string]string { return map[string]string{"database": dbName} }

func (s *mongo) launches(e *env) []launch {
	spec := e.spec("ferretdb", s.server, "-listen", e.addr(), "-data", s.data)
	// The driver's monitor waits 500 ms before retrying a refused
	// connection.
	ready := whenListening(e.addr(), func(ctx context.Context) error { return s.ping(ctx, e) })
	return []launch{{spec: spec, ready: ready}}
}

func (s *mongo) ping(ctx context.Context, e *env) error {
	c, err := mongodriver.Connect(ctx, options.Client().ApplyURI(s.url(e)))
	if err != nil {
		return err
	}
	defer c.Disconnect(context.WithoutCancel(ctx))
	return c.Ping(ctx, nil)
}
