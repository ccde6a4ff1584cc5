package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/fanout"
	"github.com/msbench/msbench/internal/results"
)

func newGenerateCmd() *cobra.Command {
	var specPath, out string
	var quiet, asJSON bool
	cmd := &cobra.Command{
		Use:   "generate --spec FILE|- --out DIR",
		Short: "Send one generator's share of a step's load (what a generator pod runs)",
		Long: `Send one generator's share of a step's load spread over several generators,
and write it into --out as 'msbench load --out' writes a load: records.parquet
and summary.json (with its HDR histograms), and the spec beside them
(generator.json), from which msbench merges the generators into one step.

The spec (JSON, from a file or standard input with -) gives the whole load,
this generator's share of it (in the open model every n-th arrival of the one
schedule, in the closed model its part of the users), the agreed start instant,
which every generator waits for and measures from, and where it may send: a
target must be on this machine, at an address inside the cluster's networks
the spec lists, or a host the spec names. It waits at most 10 minutes for the
start and refuses to begin more than 1 s after it; the load itself is bounded
as every msbench load is.

Exit status: 0 done, 1 failure, 2 bad usage or spec, 130 interrupted.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("generate takes no arguments, got %q: the load is in --spec", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if specPath == "" || out == "" {
				return usagef("generate needs --spec and --out")
			}
			spec, err := fanout.ReadSpec(specPath, cmd.InOrStdin())
			if err != nil {
				return usageError{err}
			}
			stderr := cmd.ErrOrStderr()
			progress := &console.Progress{W: stderr, TTY: isTerminal(stderr), Label: spec.Share.String()}
			show := progress.Show
			if quiet {
				show = nil
			}
			summary, err := fanout.Generate(cmd.Context(), spec, results.StepDir(out), show)
			if !quiet {
				progress.Done()
			}
			if cmd.Context().Err() != nil {
				return errInterrupted
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(summary)
			}
			console.Summary(cmd.OutOrStdout(), summary)
			fmt.Fprintf(cmd.OutOrStdout(), "records: %s\n", results.StepDir(out).RecordsPath())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&specPath, "spec", "", "the generator's spec: a JSON file, or - for standard input")
	fl.StringVar(&out, "out", "", "directory for records.parquet, summary.json and generator.json")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	fl.BoolVar(&asJSON, "json", false, "print summary.json to stdout instead of the table")
	return cmd
}
