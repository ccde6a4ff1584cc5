// Command pause is the pod sandbox's process in msbench's local cluster:
// it holds the pod's namespaces open, reaps the orphans it inherits as the
// pod's first process, and exits when told to stop. The cluster has no
// registry to pull the usual pause image from, so it builds this one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
