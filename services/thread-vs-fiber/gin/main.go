// Command gin is the "fiber model" of the thread-vs-fiber study: the image
// service on Gin, one goroutine per request, storing in Postgres via pgx.
// Its API and processing match the Spring Boot service in ../spring; see
// ../README.md.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schema is the one definition of the images table; the Spring build packages
// the same file as its schema.sql.
//
//go:embed schema.sql
var schema string

const (
	defaultMaxImageBytes = 8 << 20
	// defaultPoolSize matches the Spring service's Hikari pool.
	defaultPoolSize = 10
	// shutdownGrace bounds how long in-flight requests may finish on SIGTERM.
	shutdownGrace = 10 * time.Second
)

type config struct {
	addr          string
	databaseURL   string
	maxImageBytes int64
	poolSize      int32
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	cfg, err := configFromEnv()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	pool, err := openPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	gin.SetMode(gin.ReleaseMode)
	srv := &http.Server{
		Addr:              cfg.addr,
		Handler:           newRouter(&store{pool: pool}, cfg.maxImageBytes),
		ReadHeaderTimeout: 10 * time.Second,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe() }()
	log.Printf("listening on %s", cfg.addr)

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve %s: %w", cfg.addr, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", cfg.addr, err)
	}
	return nil
}

func configFromEnv() (config, error) {
	cfg := config{
		addr:          envOr("ADDR", "127.0.0.1:8080"),
		databaseURL:   os.Getenv("DATABASE_URL"),
		maxImageBytes: defaultMaxImageBytes,
		poolSize:      defaultPoolSize,
	}
	if cfg.databaseURL == "" {
		return cfg, errors.New("DATABASE_URL is not set (postgres://user@host:port/db?sslmode=disable)")
	}
	if v := os.Getenv("MAX_IMAGE_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("MAX_IMAGE_BYTES=%q: want a positive number of bytes", v)
		}
		cfg.maxImageBytes = n
	}
	if v := os.Getenv("DB_POOL_SIZE"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("DB_POOL_SIZE=%q: want a positive number", v)
		}
		cfg.poolSize = int32(n)
	}
	return cfg, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// openPool connects and creates the table if missing, so a service that
// starts is one that can store.
func openPool(ctx context.Context, cfg config) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	pcfg.MaxConns = cfg.poolSize
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("create images table: %w", err)
	}
	return pool, nil
}
