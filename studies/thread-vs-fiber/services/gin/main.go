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
	"net"
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
	// defaultMaxImagePixels is about 4 times the largest corpus image (the
	// 4 MB JPEG, 3937x2952) and 1/18 of a 30000x30000 decompression bomb.
	defaultMaxImagePixels = 50_000_000
	// defaultPoolSize matches the Spring service's Hikari pool.
	defaultPoolSize = 10
	// defaultHeaderTimeout bounds reading the request line and headers.
	defaultHeaderTimeout = 5 * time.Second
	// defaultBodyTimeout is what an upload's body may take after the
	// headers: an 8 MiB upload needs milliseconds on loopback, the rest is
	// room for a loaded machine.
	defaultBodyTimeout = 10 * time.Second
	// maxHeaderBytes is Tomcat's default, which the Spring service keeps.
	maxHeaderBytes = 8 << 10
	// idleTimeout is how long a keep-alive connection may wait for its next
	// request; Tomcat's keep-alive timeout is set to the same.
	idleTimeout = 60 * time.Second
	// writeTimeout bounds handling plus writing the answer (a client that
	// does not read it). The study's load steps give up on a request after
	// 60 s, so a later answer is sent to no one; a shorter one would cut
	// slow answers under overload, which the study measures.
	writeTimeout = 60 * time.Second
	// shutdownGrace is how long in-flight requests may finish on SIGTERM;
	// the lab harness kills a service 2 s after it.
	shutdownGrace = time.Second
)

type config struct {
	addr          string
	databaseURL   string
	poolSize      int32
	headerTimeout time.Duration
	limits
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

	// Cancelled when the shutdown grace is over, so the requests still
	// running stop at their next stage and release their connections.
	requestCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()

	gin.SetMode(gin.ReleaseMode)
	srv := &http.Server{
		Addr:              cfg.addr,
		Handler:           newRouter(&store{pool: pool}, cfg.limits),
		ReadHeaderTimeout: cfg.headerTimeout,
		// A cap on the whole request; the upload handler gives its body
		// exactly bodyTimeout after the headers.
		ReadTimeout:    cfg.headerTimeout + cfg.bodyTimeout,
		WriteTimeout:   writeTimeout,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return requestCtx },
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
		log.Printf("shutdown: requests still running after %v, cancelling them: %v", shutdownGrace, err)
		cancelRequests()
		srv.Close()
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
		poolSize:      defaultPoolSize,
		headerTimeout: defaultHeaderTimeout,
		limits: limits{
			maxImageBytes:  defaultMaxImageBytes,
			maxImagePixels: defaultMaxImagePixels,
			bodyTimeout:    defaultBodyTimeout,
		},
	}
	if cfg.databaseURL == "" {
		return cfg, errors.New("DATABASE_URL is not set (postgres://user@host:port/db?sslmode=disable)")
	}
	for _, v := range []struct {
		key string
		to  *int64
	}{{"MAX_IMAGE_BYTES", &cfg.maxImageBytes}, {"MAX_IMAGE_PIXELS", &cfg.maxImagePixels}} {
		if s := os.Getenv(v.key); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return cfg, fmt.Errorf("%s=%q: want a positive number", v.key, s)
			}
			*v.to = n
		}
	}
	// Durations as Spring Boot also reads them: 5s, 500ms.
	for _, v := range []struct {
		key string
		to  *time.Duration
	}{{"HEADER_TIMEOUT", &cfg.headerTimeout}, {"BODY_TIMEOUT", &cfg.bodyTimeout}} {
		if s := os.Getenv(v.key); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("%s=%q: want a positive duration such as 5s or 500ms", v.key, s)
			}
			*v.to = d
		}
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
