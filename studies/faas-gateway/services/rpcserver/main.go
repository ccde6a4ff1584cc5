// Command rpcserver runs the study's four functions behind Go's net/rpc over
// TCP, on a loopback address.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/loopback"
)

func main() {
	log.SetPrefix("rpcserver: ")
	addr := flag.String("addr", envOr("ADDR", function.DefaultAddr), "listen address, loopback only (env ADDR)")
	data := flag.String("data", envOr("DATA_DIR", filepath.Join(os.TempDir(), "msbench-faas-gateway")),
		"directory for the generated input image (env DATA_DIR)")
	readTimeout := flag.Duration("read-timeout", defaultReadTimeout,
		"time a call may take to arrive once its first byte has (env READ_TIMEOUT)")
	if v := os.Getenv("READ_TIMEOUT"); v != "" {
		if err := flag.Set("read-timeout", v); err != nil {
			log.Fatalf("READ_TIMEOUT: %v", err)
		}
	}
	flag.Parse()
	if *readTimeout <= 0 {
		log.Fatalf("read timeout %v: want a positive duration", *readTimeout)
	}
	if err := run(*addr, *data, *readTimeout); err != nil {
		log.Fatal(err)
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// defaultReadTimeout is generous: a call is a few dozen bytes the gateways
// write at once.
const defaultReadTimeout = 10 * time.Second

func run(addr, dataDir string, readTimeout time.Duration) error {
	imagePath, err := function.PrepareImage(dataDir)
	if err != nil {
		return fmt.Errorf("prepare input image: %w", err)
	}
	srv := rpc.NewServer()
	if err := srv.RegisterName(function.ServiceName, function.NewService(imagePath, function.DefaultSleep)); err != nil {
		return fmt.Errorf("register %s: %w", function.ServiceName, err)
	}
	ln, err := loopback.Listen(addr)
	if err != nil {
		return err
	}
	log.Printf("listening on %s (input image %s)", ln.Addr(), imagePath)
	return serve(ln, srv, readTimeout)
}

// serve serves srv on ln, each connection with a callCodec.
func serve(ln net.Listener, srv *rpc.Server, readTimeout time.Duration) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("accept on %s: %w", ln.Addr(), err)
		}
		go srv.ServeCodec(newCallCodec(conn, readTimeout))
	}
}
