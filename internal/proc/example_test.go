package proc_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/proc"
)

// The CLI pattern: the standard library turns SIGINT/SIGTERM into a
// cancelled context, and StopAll still gives every service its grace.
func ExampleGroup_StopAll() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var g proc.Group
	defer func() {
		if err := g.StopAll(ctx, 10*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()

	var ports proc.PortAllocator
	port, err := ports.Next()
	if err != nil {
		return
	}
	web, err := g.Start(ctx, proc.Spec{
		Name:    "web",
		Path:    "python3",
		Args:    []string{"-m", "http.server", "--bind", "127.0.0.1", fmt.Sprint(port)},
		LogPath: "/tmp/msbench/web.log",
	})
	if err != nil {
		return
	}
	check := proc.HTTPCheck{URL: fmt.Sprintf("http://127.0.0.1:%d/", port)}
	if err := proc.WaitReady(ctx, web, check, 30*time.Second); err != nil {
		return
	}
	<-ctx.Done() // run the benchmark here instead
}
