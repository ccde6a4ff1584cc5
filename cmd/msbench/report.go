package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/results"
)

func newReportCmd() *cobra.Command {
	var index bool
	var opts report.Options
	cmd := &cobra.Command{
		Use:   "report <results dir>",
		Short: "Write report.html and report.md for a run directory, or the index of all studies",
		Long: `Write report.html (one self-contained file: inline SVG plots, no network
needed to open it) and report.md into a run directory made by msbench run.
Runs that were interrupted or partly failed are reported as far as they got.

With --index, the directory is a folder of runs (results/): write its
index.html, with each study's question, a link to its latest run's report,
and one table of every claim of every study with its verdict.`,
		Example: "  msbench report results/faas-gateway-quick-20261122-101500\n  msbench report --index results/",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes one results directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if index {
				path, err := report.Index(args[0], opts)
				if err != nil {
					return usageError{err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "index: %s\n", path)
				return nil
			}
			if err := results.Check(args[0]); err != nil {
				return usageError{err}
			}
			path, err := writeReport(args[0], opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&index, "index", false, "write DIR/index.html over every study's latest run in DIR")
	cmd.Flags().BoolVar(&opts.KeepFailedAudits, "keep-failed-audits", false, "judge claims on steps whose noise audit failed too (they are left out by default)")
	return cmd
}

func writeReport(dir string, opts report.Options) (string, error) {
	path, err := report.Write(dir, opts)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}
