package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/fanout"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/results"
)

func newGenerateCmd() *cobra.Command {
	var specPath, out string
	var quiet, asJSON, idle, fetch, progressJSON bool
	cmd := &cobra.Command{
		Use:   "generate --spec FILE|- --out DIR|-",
		Short: "Send one generator's share of a step's load (what a generator pod runs)",
		Long: `Send one generator's share of a step's load spread over several generators,
and write it into --out as 'msbench load --out' writes a load: records.parquet
and summary.json (with its HDR histograms), and the spec beside them
(generator.json), from which msbench merges the generators into one step.
With --out - these files go to standard output as a tar stream instead,
for a generator in a pod whose output comes back through its exec.

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
			switch {
			case idle:
				// A generator pod's main process: the loads arrive by
				// exec, and the pod lives until deleted (SIGTERM).
				<-cmd.Context().Done()
				return nil
			case fetch:
				return fetchOne(cmd)
			case specPath == "" || out == "":
				return usagef("generate needs --spec and --out")
			case out == "-" && asJSON:
				return usagef("--json prints to standard output, which --out - fills with the output's tar stream")
			}
			spec, err := fanout.ReadSpec(specPath, cmd.InOrStdin())
			if err != nil {
				return usageError{err}
			}
			stderr := cmd.ErrOrStderr()
			progress := &console.Progress{W: stderr, TTY: isTerminal(stderr), Label: spec.Share.String()}
			show := progress.Show
			switch {
			case progressJSON:
				show = func(s load.Snapshot) { fanout.WriteProgress(stderr, s) }
			case quiet:
				show = nil
			}
			dir := results.StepDir(out)
			if out == "-" {
				tmp, err := os.MkdirTemp("", "msbench-generate-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = results.StepDir(filepath.Join(tmp, "out"))
			}
			summary, err := fanout.Generate(cmd.Context(), spec, dir, show)
			if !quiet && !progressJSON {
				progress.Done()
			}
			if cmd.Context().Err() != nil {
				return errInterrupted
			}
			if err != nil {
				return err
			}
			if out == "-" {
				if err := fanout.WriteOutputs(cmd.OutOrStdout(), dir); err != nil {
					return err
				}
				if specPath == "-" {
					awaitReceipt(cmd)
				}
				return nil
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
	// What a generator pod runs, not for a person.
	fl.BoolVar(&idle, "idle", false, "wait for SIGTERM (a generator pod's main process)")
	fl.BoolVar(&fetch, "fetch", false, "send one request read as JSON from stdin, print the answer as JSON")
	fl.BoolVar(&progressJSON, "progress-json", false, "progress as JSON lines on stderr")
	for _, name := range []string{"idle", "fetch", "progress-json"} {
		_ = fl.MarkHidden(name)
	}
	return cmd
}

// fetchOne sends the one request of a FetchRequest on stdin and prints
// the FetchResponse: a hook or a first request sent from a generator pod.
func fetchOne(cmd *cobra.Command) error {
	var r fanout.FetchRequest
	dec := json.NewDecoder(cmd.InOrStdin())
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return usageError{fmt.Errorf("fetch request: %w", err)}
	}
	resp, err := fanout.Fetch(cmd.Context(), r)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(cmd.OutOrStdout()).Encode(resp); err != nil {
		return err
	}
	awaitReceipt(cmd)
	return nil
}

// receiptWait bounds awaitReceipt: a sender that holds stdin open longer
// is gone or stuck, and the output was sent anyway.
const receiptWait = time.Minute

// awaitReceipt waits until stdin ends. A pod's exec can lose the end of
// a process's output when the process exits at once (the container
// runtime's copy races its exit), so msbench's side of the exec keeps
// stdin open until it has read the whole output, and closes it then.
// Stdin from a file or a closed pipe ends at once.
func awaitReceipt(cmd *cobra.Command) {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, cmd.InOrStdin())
		close(done)
	}()
	select {
	case <-done:
	case <-cmd.Context().Done():
	case <-time.After(receiptWait):
	}
}
