//go:generate go run ../../internal/analysis/gen -studies ../../studies -out analyses.go

// Command msbench is a lab for microservice architecture decisions: it
// starts real implementations, drives load at them accurately and reports
// what it measured.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/runner"
)

// usageError marks a mistake in how msbench was called: one line, exit 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errInterrupted ends a run that Ctrl-C stopped after it saved what it had.
var errInterrupted = errors.New("interrupted")

func main() {
	// Closing the terminal (SIGHUP) stops a run as Ctrl-C does, with
	// everything stopped and removed and what was measured kept; by
	// default it would kill msbench on the spot. So does a reader that
	// went away (`msbench run … | head`), told by a write to standard
	// output or error failing with EPIPE. SIGPIPE itself says nothing:
	// once caught it is also raised by every write to a socket whose peer
	// has gone, as a link proxy's are when a broker restarts. It is caught
	// (not ignored) so that the writes fail instead of killing msbench,
	// while the children still start with its default.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, readerGone := context.WithCancel(ctx)
	defer readerGone()
	os.Exit(run(ctx, os.Args[1:], &output{w: os.Stdout, gone: readerGone}, &output{w: os.Stderr, gone: readerGone}))
}

// output is standard output or error, which stops the run when its
// reader has gone.
type output struct {
	w    io.Writer
	gone context.CancelFunc
}

// isTerminal reports whether w is a terminal, seen through an output.
func isTerminal(w io.Writer) bool {
	if o, ok := w.(*output); ok {
		w = o.w
	}
	f, ok := w.(*os.File)
	return ok && console.IsTerminal(f)
}

func (o *output) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.gone()
	}
	return n, err
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "msbench: %v (see 'msbench %s--help')\n", err, commandName(root, args))
		return 2
	case strings.HasPrefix(err.Error(), "unknown command"):
		// Cobra's own suggestions span lines; the first says it all.
		first, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(stderr, "msbench: %s (see 'msbench --help')\n", first)
		return 2
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, "msbench: interrupted")
		return 130
	default:
		fmt.Fprintf(stderr, "msbench: %v\n", err)
		return 1
	}
}

// commandName is the command's path after "msbench", for the help hint.
func commandName(root *cobra.Command, args []string) string {
	if cmd, _, err := root.Find(args); err == nil && cmd != root {
		return strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ") + " "
	}
	return ""
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "msbench",
		Short:         "A lab for microservice architecture decisions, on real code",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// For profiling msbench itself, e.g. the load engine's request path.
	var cpuProfile string
	var swept lease.Swept
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of msbench itself to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// What an msbench killed too hard to clean up left behind
		// (processes, data directories, cgroups) goes first.
		if swept = lease.Sweep(); !swept.Empty() {
			fmt.Fprintf(cmd.ErrOrStderr(), "msbench: %s\n", swept)
		}
		// And on a cluster: the namespaces of runs killed so, and a local
		// cluster whose msbench cluster up died before it was ready.
		ks := kube.Sweep(cmd.Context())
		if !ks.Empty() {
			fmt.Fprintf(cmd.ErrOrStderr(), "msbench: %s\n", ks)
		}
		if err := runner.SweepImages(cmd.Context(), ks.Runs); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "msbench: %v\n", err)
		}
		if down, err := cluster.SweepDead(cmd.Context(), cluster.DefaultStateDir()); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "msbench: taking down a local cluster whose start was killed: %v\n", err)
		} else if down {
			fmt.Fprintf(cmd.ErrOrStderr(), "msbench: took down the local cluster in %s, whose start was killed\n", cluster.DefaultStateDir())
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return pprof.StartCPUProfile(f)
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if cpuProfile != "" {
			pprof.StopCPUProfile()
		}
	}
	root.AddCommand(newLoadCmd(), newRunCmd(), newReportCmd(), newDepsCmd(), newCleanCmd(&swept), newCompareCmd(), newABCmd(), newGenerateCmd(), newClusterCmd(), newDependencyCmd(), newLinkCmd())
	return root
}
