// Command ferretdb serves the MongoDB wire protocol on a loopback port,
// storing documents in a PostgreSQL database. It stands in for MongoDB,
// which Debian does not package; msbench starts it, and the PostgreSQL
// behind it, as child processes (internal/deps), so it embeds FerretDB as a
// library rather than relying on FerretDB's own command.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to serve the MongoDB wire protocol on")
	store := flag.String("postgresql", "", "URL of the PostgreSQL database to store the documents in (required)")
	flag.Parse()
	if err := run(*listen, *store); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, store string) error {
	if store == "" {
		return fmt.Errorf("-postgresql is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: listen},
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Handler:       "postgresql",
		PostgreSQLURL: store,
	})
	if err != nil {
		return err
	}
	// Printed after New, which has already bound the port, so a reader of
	// the log knows the server accepts connections.
	fmt.Fprintln(os.Stderr, "ferretdb listening on", listen)
	return f.Run(ctx)
}
