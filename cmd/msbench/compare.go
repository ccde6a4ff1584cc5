package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/compare"
)

type compareFlags struct {
	failIf    []string
	json      bool
	resamples int
	seed      uint64
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare [flags] BASE NEW",
		Short: "Say whether NEW is faster, slower or the same as BASE, with confidence intervals",
		Long: `Compare two results, BASE and NEW: each a run directory of msbench run or a
directory written by msbench load --out. For every step and variant measured in
both (for load directories, the one load), compare p50, p90, p99 and mean
latency, throughput and the error rate: the NEW/BASE ratio (for errors the
difference NEW − BASE, in percentage points) with its 95% confidence interval,
the number of runs or requests behind it, and a verdict: faster, slower, or the
same within noise (the interval contains 1, or 0 for errors).

Where the interval comes from, as printed with each comparison:
  runs             at least two runs a side: one value per run, the interval from
                   how the runs spread (Fieller's interval for the ratio of means,
                   Welch's for the difference of error rates). The run is the unit
                   of replication: it includes what changes between deployments.
  block-bootstrap  a single run on a side: a circular-block bootstrap over time within
                   each run (latencies and failures in send order, completions per
                   second), BASE and NEW resampled independently. Requests are never
                   resampled one by one: neighbours are correlated. The interval says
                   how much the numbers would move if the runs went on, not what a
                   new deployment would do: repeat runs for that.

--fail-if RULE (repeatable) exits 1 when NEW is worse than BASE beyond a margin
with its whole interval past it:
  p50>+10%  p90>+10%  p99>+10%  mean>+10%   latency up by more than 10%
  throughput<-5%                            throughput down by more than 5%
  errors>+1%                                error rate up by more than 1 percentage point

Exit status: 0 no rule breached, 1 a rule breached (or the results could not be
read), 2 bad usage (unknown metric, malformed rule, a directory that holds
neither kind of result, nothing in common).`,
		Example: `  msbench compare results/load-before results/load-after
  msbench compare --fail-if 'p99>+10%' --fail-if 'throughput<-5%' results/base results/new
  msbench compare --json results/cache-quick-20260101-120000 results/cache-quick-20260102-120000`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare takes two directories, BASE and NEW, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVar(&f.failIf, "fail-if", nil, "exit 1 when NEW is worse beyond a margin, e.g. 'p99>+10%' or 'throughput<-5%' (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fl.IntVar(&f.resamples, "resamples", compare.DefaultResamples, "block bootstrap resamples (single runs)")
	fl.Uint64Var(&f.seed, "seed", 1, "block bootstrap seed: the same seed gives the same intervals")
	return cmd
}

func runCompare(cmd *cobra.Command, f compareFlags, baseDir, newDir string) error {
	var rules []compare.Rule
	for _, text := range f.failIf {
		r, err := compare.ParseRule(text)
		if err != nil {
			return asUsage(err)
		}
		rules = append(rules, r)
	}
	if f.resamples < 100 {
		return usagef("--resamples %d: want at least 100", f.resamples)
	}
	base, err := compare.Open(baseDir)
	if err != nil {
		return asUsage(err)
	}
	next, err := compare.Open(newDir)
	if err != nil {
		return asUsage(err)
	}
	report, err := compare.Compare(base, next, compare.Options{Resamples: f.resamples, Seed: f.seed})
	if err != nil {
		return asUsage(err)
	}
	report.Apply(rules)
	if f.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else if err := compare.WriteText(cmd.OutOrStdout(), report); err != nil {
		return err
	}
	if breaches := report.Breaches(); len(breaches) > 0 {
		more := ""
		if len(breaches) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(breaches)-1)
		}
		return fmt.Errorf("--fail-if %s%s", breaches[0], more)
	}
	return nil
}

// asUsage turns compare's usage errors into msbench's (one line, exit 2).
func asUsage(err error) error {
	var ue compare.UsageError
	if errors.As(err, &ue) {
		return usageError{errors.New(strings.ReplaceAll(ue.Error(), "\n", " "))}
	}
	return err
}
