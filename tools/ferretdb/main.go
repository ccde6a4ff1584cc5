// Command ferretdb serves the MongoDB wire protocol on a loopback port,
// storing documents in SQLite files under a data directory. It stands in for
// MongoDB, which Debian does not package; msbench starts it as a child
// process (internal/deps), so it embeds FerretDB as a library rather than
// relying on FerretDB's own command.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to serve the MongoDB wire protocol on")
	data := flag.String("data", "", "directory for the SQLite databases (required)")
	flag.Parse()
	if err := run(*listen, *data); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, data string) error {
	if data == "" {
		return fmt.Errorf("-data is required")
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Handler:  "sqlite",
		// The SQLite handler wants a directory URI with a trailing slash.
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return err
	}
	// Printed after New, which has already bound the port, so a reader of
	// the log knows the server accepts connections.
	fmt.Fprintln(os.Stderr, "ferretdb listening on", listen)
	return f.Run(ctx)
}
