package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/deppod"
	"github.com/msbench/msbench/internal/deps"
)

func newDependencyCmd() *cobra.Command {
	var listen, dir, logDir, binDir string
	cmd := &cobra.Command{
		Use:   "dependency KIND [--listen IP:PORT] [--dir DIR]",
		Short: "Run one dependency in the foreground (what a dependency pod runs)",
		Long: `Start one dependency (` + kindList() + `) as msbench deps up
does — its data directory, configuration and account made fresh — but listening
on --listen, the address clients dial (in a pod, the pod's IP and the port its
Service names), with the account's password taken from the environment
variable ` + deppod.PasswordEnv + ` (a Kubernetes Secret's key) instead of a fresh
one. The variable is removed from the environment before the server starts.

Once a client can use it, one JSON line on standard output gives its address
and values (user, database, url...), the password in them as ` + deppod.PasswordPlaceholder + `.
SIGUSR1 restarts the server in place, keeping its data and address, and prints
a "restarted" line. SIGTERM, SIGINT or SIGHUP stop it cleanly and remove its
directory (a pod's deletion); the exit status is then 0.

A pod runs it so, the variable set from a Secret and POD_IP from status.podIP:

  MSBENCH_DEPENDENCY_PASSWORD=... msbench dependency postgres --listen "$POD_IP:5432" --dir /var/lib/msbench-dependency/data

Exit status: 0 stopped, 1 failure, 2 bad usage or password, 130 interrupted before ready.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("dependency takes one of: %s", kindList())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := deps.ParseKind(args[0])
			if err != nil {
				return usageError{err}
			}
			password, err := deppod.Password(kind, os.LookupEnv)
			if err != nil {
				return usageError{err}
			}
			// The servers' processes need it no more than any other
			// child does.
			os.Unsetenv(deppod.PasswordEnv)
			restart := make(chan os.Signal, 1)
			signal.Notify(restart, syscall.SIGUSR1)
			defer signal.Stop(restart)
			opts := deps.Options{Listen: listen, Password: password, Dir: dir, LogDir: logDir, BinDir: binDir}
			err = deppod.Run(cmd.Context(), kind, opts, cmd.OutOrStdout(), restart)
			if errors.Is(err, context.Canceled) {
				return errors.Join(errInterrupted, err)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "", "IP:PORT to listen on and be dialled at (default: a free port on 127.0.0.1)")
	fl.StringVar(&dir, "dir", "", "the dependency's private directory, removed when it stops (default: a new one in $TMPDIR)")
	fl.StringVar(&logDir, "logs", "", "keep the servers' output in this directory (default: in --dir)")
	fl.StringVar(&binDir, "bin", "", "look for the server programs only in these directories, DIR[:DIR...], searched in order")
	return cmd
}
