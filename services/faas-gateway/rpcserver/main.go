// Command rpcserver runs the study's four functions behind Go's net/rpc over
// TCP, on a loopback address.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/rpc"
	"os"
	"path/filepath"

	"github.com/msbench/msbench/services/faas-gateway/function"
	"github.com/msbench/msbench/services/faas-gateway/loopback"
)

func main() {
	log.SetPrefix("rpcserver: ")
	addr := flag.String("addr", envOr("ADDR", function.DefaultAddr), "listen address, loopback only (env ADDR)")
	data := flag.String("data", envOr("DATA_DIR", filepath.Join(os.TempDir(), "msbench-faas-gateway")),
		"directory for the generated input image (env DATA_DIR)")
	flag.Parse()
	if err := run(*addr, *data); err != nil {
		log.Fatal(err)
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func run(addr, dataDir string) error {
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
	srv.Accept(ln)
	return fmt.Errorf("stopped accepting on %s", ln.Addr())
}
