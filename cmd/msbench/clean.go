package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/lease"
)

// The sweep itself runs before every command (see newRoot); this command
// exists to run it alone, e.g. after a crash, and say that it found nothing.
func newCleanCmd(swept *lease.Swept) *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Take back what msbench processes that were killed too hard to clean up left behind",
		Long: `Every msbench records what it holds on the machine (the process groups it
started, its temporary and data directories, its cgroups) in a lease file in
the temporary directory while it holds them. An msbench that dies without
cleaning up (SIGKILL, a crash, the out-of-memory killer) leaves its lease
behind, and the next msbench to start, whatever its command, kills what is
left of those processes and removes those directories and cgroups. This
command does only that.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The sweep ran before this and said on stderr what it did.
			if len(swept.Left) > 0 {
				return fmt.Errorf("some of what dead msbench processes left could not be removed: %w", errors.Join(swept.Left...))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "nothing of a dead msbench is left")
			return nil
		},
	}
}
