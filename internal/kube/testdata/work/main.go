// Command work is the kube package's test pod: with -burn it keeps a CPU
// busy, without it it idles. It prints the SHA-256 of $SECRET, so the
// test sees the secret arrived without the value reaching a log, and
// exits on SIGTERM (as PID 1 it would otherwise ignore it and hold its
// namespace's deletion for the grace period).
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	burn := flag.Bool("burn", false, "keep a CPU busy")
	flag.Parse()
	fmt.Printf("secret sha256 %x\n", sha256.Sum256([]byte(os.Getenv("SECRET"))))
	if *burn {
		go func() {
			for x := uint64(1); ; x = x*6364136223846793005 + 1442695040888963407 {
			}
		}()
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
}
