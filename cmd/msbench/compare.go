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
	noise     string
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare [flags] BASE NEW",
		Short: "Say whether NEW is faster, slower or the same as BASE, with confidence intervals",
		Long: `Compare two results, BASE and NEW. Each is a run directory of msbench run, a
directory written by msbench load --out, or a directory holding several of those
(each one run of the same system, e.g. a CI job's repeated loads). For every step
and variant measured in both (for loads, the one load), compare p50, p90, p99 and
mean latency, throughput and the error rate: the NEW/BASE ratio (for errors the
difference NEW − BASE, in percentage points) with its 95% confidence interval,
the number of runs or requests behind it, and a verdict: faster, slower, the same
within noise (a bounded interval containing 1, or 0 for errors), or unknown (no
interval, or an unbounded one).

Where the interval comes from, by the runs on each side, as printed with each
comparison:
  runs             two or more runs a side: one value per run, the interval from how
                   the runs spread (Fieller's interval for the ratio of means, cut at
                   0; unbounded when BASE's runs are too few or too spread, and then
                   unknown; Welch's for the difference of error rates). The run is the
                   unit of replication: it includes what changes between deployments.
  noise-model      one run on a side, with --noise: NEW/BASE × exp(±t·σ·√(1/nBASE +
                   1/nNEW)), σ the metric's run-to-run spread of logs measured on A/A
                   runs, t on its degrees of freedom (the A/A pairs).
  one-vs-runs      one run against several, without --noise: the several give σ (the
                   standard deviation of their logs, n − 1 degrees of freedom), taken
                   to hold for the one run too; the several are not concatenated.
  block-bootstrap  one run a side, without --noise: a circular-block bootstrap over
                   time within each run (latencies and failures in send order,
                   completions per second), BASE and NEW resampled independently.
                   The interval says how much the numbers would move if the runs went
                   on, not what a new deployment would do: --fail-if refuses it.

--noise DIR is a run directory whose study deploys an A/A twin (pairs: the twin and
its variant in each repetition and step, both passing the noise audit), or a
directory of several load --out directories of the same system (pairs: first and
second in name order, third and fourth, ...). The spread is pooled over steps.

--fail-if RULE (repeatable) exits 1 when NEW is worse than BASE beyond a margin:
  p50>+10%  p90>+10%  p99>+10%  mean>+10%   latency up by more than 10%
  throughput<-5%                            throughput down by more than 5%
  errors>+1%                                error rate up by more than 1 percentage point
Each rule on each comparison is one test; over k tests each is made at the
one-sided level 1 − 0.05/k (Bonferroni; Holm's procedure fails the same builds),
so that a build no worse than every limit fails at most 5% of the time for the
whole comparison, however many steps and variants it has. A test fails when its
one-sided bound lies past the limit; one whose interval is unbounded at that level
cannot fail, and the output counts those. With one run a side and no --noise the
gate refuses (exit 2): one run cannot tell a regression from deployment noise.

Exit status: 0 no rule breached, 1 a rule breached (or the results could not be
read), 2 bad usage (unknown metric, malformed rule, a directory that holds no
result, nothing in common, --fail-if on one run a side without --noise).`,
		Example: `  msbench compare results/load-before results/load-after
  msbench compare --fail-if 'p99>+10%' --fail-if 'throughput<-5%' results/base results/new
  msbench compare --fail-if 'p99>+10%' --noise results/aa results/load-before results/load-after
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
	fl.StringVar(&f.noise, "noise", "", "A/A runs giving the run-to-run noise for one run a side: a directory of several load --out directories of one system, or a run directory with an A/A twin")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fl.IntVar(&f.resamples, "resamples", compare.DefaultResamples, "block bootstrap resamples (single runs)")
	fl.Uint64Var(&f.seed, "seed", 1, "block bootstrap seed: the same seed gives the same intervals")
	return cmd
}

func runCompare(cmd *cobra.Command, f compareFlags, baseDir, newDir string) error {
	rules, err := parseRules(f.failIf)
	if err != nil {
		return err
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
	opt := compare.Options{Resamples: f.resamples, Seed: f.seed}
	if f.noise != "" {
		if opt.Noise, err = compare.OpenNoise(f.noise); err != nil {
			return asUsage(err)
		}
	}
	report, err := compare.Compare(base, next, opt)
	if err != nil {
		return asUsage(err)
	}
	if err := report.Apply(rules); err != nil {
		return asUsage(err)
	}
	if err := printComparison(cmd, report, f.json); err != nil {
		return err
	}
	return breached(report)
}

// parseRules reads --fail-if rules; a malformed one is bad usage.
func parseRules(texts []string) ([]compare.Rule, error) {
	var rules []compare.Rule
	for _, text := range texts {
		r, err := compare.ParseRule(text)
		if err != nil {
			return nil, asUsage(err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// printComparison prints the report as text or, asked, JSON.
func printComparison(cmd *cobra.Command, report *compare.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return compare.WriteText(cmd.OutOrStdout(), report)
}

// breached is the error of a report whose --fail-if rules failed: the
// first breach in full, and how many more.
func breached(report *compare.Report) error {
	breaches := report.Breaches()
	if len(breaches) == 0 {
		return nil
	}
	more := ""
	if len(breaches) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(breaches)-1)
	}
	return fmt.Errorf("--fail-if %s%s", breaches[0], more)
}

// asUsage turns compare's usage errors into msbench's (one line, exit 2).
func asUsage(err error) error {
	var ue compare.UsageError
	if errors.As(err, &ue) {
		return usageError{errors.New(strings.ReplaceAll(ue.Error(), "\n", " "))}
	}
	return err
}
