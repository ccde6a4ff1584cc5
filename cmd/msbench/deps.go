package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/proc"
)

func newDepsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deps",
		Short: "Start the databases and brokers that services depend on",
		Long: `Start real database and broker servers the way a study run does: as children
of msbench, each on a free loopback port with a private data directory that
is removed when it stops. Known kinds: ` + kindList() + `.`,
	}
	cmd.AddCommand(newDepsUpCmd())
	return cmd
}

func newDepsUpCmd() *cobra.Command {
	var logDir, root string
	cmd := &cobra.Command{
		Use:   "up KIND...",
		Short: "Start dependencies, print how to connect, stop them on Ctrl-C",
		Long: `Start the named dependencies in parallel, print each one's connection string,
address and start-up time, and keep them running until Ctrl-C, which stops
them all and removes their data.`,
		Example: `  msbench deps up postgres redis
  msbench deps up rabbitmq --logs /tmp/rabbit-logs`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("deps up takes one or more of: %s", kindList())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds := make([]deps.Kind, len(args))
			for i, a := range args {
				k, err := deps.ParseKind(a)
				if err != nil {
					return usageError{err}
				}
				if slices.Contains(kinds[:i], k) {
					return usagef("%s given twice", k)
				}
				kinds[i] = k
			}
			opts := deps.Options{LogDir: logDir, Root: root}
			return depsUp(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), kinds, opts)
		},
	}
	cmd.Flags().StringVar(&logDir, "logs", "", "keep the servers' output in this directory (default: removed with the data)")
	cmd.Flags().StringVar(&root, "root", "", "msbench checkout, whose tools/ferretdb serves mongo (default: found from the working directory)")
	return cmd
}

// depsUp starts kinds, prints how to reach them on out and holds them until
// ctx is cancelled; progress goes to log.
func depsUp(ctx context.Context, out, log io.Writer, kinds []deps.Kind, opts deps.Options) error {
	instances, err := startAll(ctx, kinds, opts)
	if err == nil {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		for _, in := range instances {
			fmt.Fprintf(tw, "%s\t%s\t%s\tstarted in %v\n", in.Kind, in.URL, in.Addr, in.StartupTime.Round(time.Millisecond))
		}
		tw.Flush()
		fmt.Fprintln(log, "running; Ctrl-C stops them and removes their data")
		<-ctx.Done()
	}
	var stopErrs []error
	for _, in := range slices.Backward(instances) {
		if in != nil {
			stopErrs = append(stopErrs, in.Stop())
		}
	}
	stopErr := errors.Join(stopErrs...)
	switch {
	case err != nil && ctx.Err() != nil:
		return errors.Join(errInterrupted, stopErr)
	case err != nil:
		return errors.Join(err, stopErr)
	case stopErr != nil:
		return stopErr
	}
	fmt.Fprintln(log, "stopped")
	return nil
}

// startAll starts kinds in parallel, because some take seconds, and gives
// up on all at the first error, returning that one. The caller stops the
// instances that did start (the non-nil entries).
func startAll(ctx context.Context, kinds []deps.Kind, opts deps.Options) ([]*deps.Instance, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts.Ports = new(proc.PortAllocator)
	var (
		instances = make([]*deps.Instance, len(kinds))
		wg        sync.WaitGroup
		mu        sync.Mutex
		first     error
	)
	for i, k := range kinds {
		wg.Go(func() {
			in, err := deps.Start(ctx, k, opts)
			instances[i] = in
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return instances, first
}

func kindList() string {
	names := make([]string, 0, len(deps.Kinds()))
	for _, k := range deps.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}
