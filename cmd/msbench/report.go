package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report <results dir>",
		Short: "Write report.html and report.md for a run directory",
		Long: `Write report.html (one self-contained file: inline SVG plots, no network
needed to open it) and report.md into a run directory made by msbench run.
Runs that were interrupted or partly failed are reported as far as they got.`,
		Example: "  msbench report results/faas-gateway-quick-20261122-101500",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes one results directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := results.Check(args[0]); err != nil {
				return usageError{err}
			}
			path, err := writeReport(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", path)
			return nil
		},
	}
}

func writeReport(dir string) (string, error) {
	path, err := report.Write(dir)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}
