package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/compare"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/study"
)

// abAxis is the axis the two builds are told apart by in the run:
// base-nethttp-pooled-0ms and new-nethttp-pooled-0ms.
const abAxis = "build"

// abMinRepetitions is the fewest repetitions ab decides on: with 3 paired
// repetitions the 95% intervals covered the truth 94.5–95.2% of the time
// in compare's calibration, and the gate failed identical builds in at
// most 0.1% of 6-cell comparisons.
const abMinRepetitions = 3

type abFlags struct {
	base, new   string
	profile     string
	variants    []string
	steps       []string
	users       int
	failIf      []string
	repetitions int
	budget      time.Duration
	json        bool
	seed        uint64
	placeFlags
}

func newABCmd() *cobra.Command {
	var f abFlags
	cmd := &cobra.Command{
		Use:   "ab <study> --base REF [flags]",
		Short: "Gate a change: measure two builds of a study side by side and fail when NEW is worse",
		Long: `Measure two builds of one study on this machine in one run, and say whether
NEW is faster, slower or the same as BASE, step by step, with intervals a
CI gate can trust.

BASE is a git ref, built from a clean copy of its commit (none of the
working tree's changes, builds or ignored files); NEW is the working tree,
or with --new another ref. Every repetition deploys both builds of every
chosen variant at once (variants base-KEY and new-KEY of one run) and
measures their steps interleaved: in each round every deployment gets one
slice of the step's load, in a fresh random order, so that what the
machine does in the meantime falls on both. The load, the steps and the
generator are NEW's (the working tree's msbench); each build's services,
builds and study settings are its own.

Each step of each variant gives one NEW/BASE ratio per repetition (for
errors, one difference); the comparison is their geometric mean with a
t-interval on their logs over the repetitions, which are the unit of
replication. At least 3 repetitions are made, then more up to
--repetitions while another fits in --budget.

--fail-if RULE (repeatable) exits 1 when NEW is worse than BASE beyond a
margin with the whole interval past it:
  p50>+5%  p90>+5%  p99>+5%  mean>+5%   latency up by more than 5%
  throughput<-5%                        throughput down by more than 5%
  errors>+1%                            error rate up by more than 1 percentage point
Each rule on each step and variant is one test, each made at the one-sided
level 1 − 0.05/k over the k tests (Bonferroni), so that the same build
twice fails at most 5% of the time, however many cells are gated.

Exit status: 0 no rule breached, 1 a rule breached (or a deployment failed),
2 bad usage (an unknown ref, step or variant, a malformed rule).`,
		Example: `  msbench ab faas-gateway --base origin/main --variants nethttp-pooled-0ms --steps empty --users 2 --fail-if 'p50>+5%' --budget 10m
  msbench ab thread-vs-fiber --base HEAD~1 --fail-if 'p50>+5%' --fail-if 'throughput<-5%' --json
  msbench ab cache --base v1.2 --new v1.3 --profile quick --repetitions 8`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("ab takes one study name or file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.base, "base", "", "git ref of the build to compare against, e.g. origin/main (required)")
	fl.StringVar(&f.new, "new", "", "git ref of the new build (default: the working tree)")
	fl.StringArrayVar(&f.failIf, "fail-if", nil, "exit 1 when NEW is worse beyond a margin, e.g. 'p99>+5%' or 'throughput<-5%' (repeatable)")
	fl.StringVar(&f.profile, "profile", "", "profile of the study file to apply (default: quick when the study has it, else the file as written)")
	fl.StringSliceVar(&f.variants, "variants", nil, "variants to compare, by key (default: every variant of the profile)")
	fl.StringSliceVar(&f.steps, "steps", nil, "steps to measure, by name or glob (default: every step of the profile)")
	fl.IntVar(&f.users, "users", 0, "users of every closed-model step instead of the study's, e.g. 2: a change in service time shows in latency below saturation, where the study's 150 users' queueing would hide it")
	fl.IntVar(&f.repetitions, "repetitions", 5, fmt.Sprintf("the most repetitions; at least %d are made", abMinRepetitions))
	fl.DurationVar(&f.budget, "budget", 0, fmt.Sprintf("add no repetition past the first %d that would end past this long after the command began, e.g. 10m", abMinRepetitions))
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the slices' orders (default: drawn at random)")
	f.placeFlags.register(fl)
	return cmd
}

func runAB(cmd *cobra.Command, f abFlags, name string) (err error) {
	start := time.Now()
	if f.base == "" {
		return usagef("--base is required: the git ref of the build to compare against")
	}
	if f.users < 0 {
		return usagef("--users %d: want at least 1", f.users)
	}
	if f.repetitions < abMinRepetitions {
		return usagef("--repetitions %d: ab decides on at least %d", f.repetitions, abMinRepetitions)
	}
	rules, err := parseRules(f.failIf)
	if err != nil {
		return err
	}
	path, opts, err := f.locate(name)
	if err != nil {
		return err
	}
	root := opts.Root
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return usageError{err}
	}
	ctx := cmd.Context()
	// Copies go when the command ends, however it ends.
	var copies []*checkout.Export
	defer func() {
		for _, c := range copies {
			err = errors.Join(err, c.Remove())
		}
	}()
	// exportRef copies ref and returns the copy's root and what it is.
	exportRef := func(ref string) (dir, what string, err error) {
		// Interrupted before or during the copy: nothing was measured.
		if ctx.Err() != nil {
			return "", "", errInterrupted
		}
		e, err := checkout.ExportRef(ctx, root, ref)
		switch {
		case ctx.Err() != nil:
			return "", "", errInterrupted
		case err != nil:
			return "", "", usageError{err}
		}
		copies = append(copies, e)
		fmt.Fprintf(cmd.ErrOrStderr(), "%s copied to %s\n", e, e.Dir)
		return e.Dir, e.String(), nil
	}
	if !cmd.Flags().Changed("profile") {
		f.profile = defaultProfile(path)
	}
	// NEW first: a mistake in what was asked shows before BASE is copied.
	newRoot, newName := root, "the working tree of "+root
	if f.new != "" {
		if newRoot, newName, err = exportRef(f.new); err != nil {
			return err
		}
	}
	next, err := abStudy(filepath.Join(newRoot, rel), "NEW", f)
	if err != nil {
		return err
	}
	baseRoot, baseName, err := exportRef(f.base)
	if err != nil {
		return err
	}
	base, err := abStudy(filepath.Join(baseRoot, rel), "BASE", f)
	if err != nil {
		return err
	}
	for _, v := range next.Matrix() {
		if !slices.ContainsFunc(base.Matrix(), func(b study.Variant) bool { return b.Key() == v.Key() }) {
			return usagef("variant %s is not in BASE's study: choose variants both builds have with --variants", v.Key())
		}
	}
	s, err := next.SideBySide(abAxis, []string{"base", "new"})
	if err != nil {
		return usageError{err}
	}
	s.Repetitions = abMinRepetitions
	// The builds of either side go to the working tree's cache, and the
	// run to its results; NEW's root is a copy when --new names a ref.
	opts.Root, opts.MaxRepetitions = newRoot, f.repetitions
	opts.Sources = &runner.Sources{Axis: abAxis, Trees: map[string]runner.Tree{"base": {Root: baseRoot, Study: base, What: baseName}}}
	if f.results == "" {
		// Apart from msbench run's, whose latest per study the index shows.
		opts.ResultsRoot = filepath.Join(root, "results", "ab")
	}
	opts.Log = cmd.ErrOrStderr()
	opts.TTY = isTerminal(opts.Log)
	if cmd.Flags().Changed("seed") {
		opts.Seed = &f.seed
	}
	b := budget{limit: f.budget, start: start, now: time.Now}
	opts.Enough = func(_ string, reps int) (bool, string, error) {
		if over, why := b.overrun(reps); over {
			return true, why, nil
		}
		return false, fmt.Sprintf("%d of at most %d repetitions", reps, f.repetitions), nil
	}
	dir, runErr := runner.Run(ctx, s, opts)
	switch {
	case errors.Is(runErr, runner.ErrInterrupted):
		// A gate decides on a whole run or not at all: no resumption.
		return errInterrupted
	case dir == "":
		return runErr
	}
	report, err := abCompare(dir, next, baseName, newName, rules)
	if err != nil {
		return errors.Join(runErr, err)
	}
	if err := printComparison(cmd, report, f.json); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "run directory: %s (msbench report %s for the full report); %v in all\n", dir, dir, time.Since(start).Round(time.Second))
	return errors.Join(runErr, breached(report))
}

// defaultProfile is the profile ab applies when none is asked: quick, or
// the file as written when the study has no such profile.
func defaultProfile(path string) string {
	s, err := study.Load(path, "")
	if err != nil || !slices.Contains(s.Profiles, "quick") {
		return "" // a file that does not load says why when read for NEW
	}
	return "quick"
}

// abStudy reads one build's study file with the profile, variants and
// steps asked; side names the build in errors.
func abStudy(path, side string, f abFlags) (*study.Study, error) {
	s, err := study.Load(path, f.profile)
	if err != nil {
		return nil, usagef("%s's study file: %v", side, err)
	}
	if len(f.variants) > 0 {
		if err := s.KeepVariants(f.variants); err != nil {
			return nil, usagef("%s: --variants: %v", side, err)
		}
	}
	if len(f.steps) > 0 {
		if err := s.KeepSteps(f.steps); err != nil {
			return nil, usagef("%s: --steps: %v", side, err)
		}
	}
	for _, st := range s.Load.Steps {
		switch {
		case f.users == 0:
		case st.Load.Open:
			return nil, usagef("--users %d: step %s sends at a rate (open model), not with users: leave it out with --steps", f.users, st.Name)
		default:
			st.Load.Users, st.Load.Connections = f.users, 0
		}
	}
	return s, nil
}

// abCompare reads the run in dir and compares every variant of next (the
// study as asked, before the builds were set side by side) NEW against
// BASE, then tests the rules.
func abCompare(dir string, next *study.Study, baseName, newName string, rules []compare.Rule) (*compare.Report, error) {
	src, err := compare.Open(dir)
	if err != nil {
		return nil, err
	}
	var pairs []compare.Pair
	for _, v := range next.Matrix() {
		side := func(name string) string {
			return study.Variant{Values: append([][2]string{{abAxis, name}}, v.Values...)}.Key()
		}
		pairs = append(pairs, compare.Pair{Label: v.Key(), Base: side("base"), New: side("new")})
	}
	report, err := compare.Paired(src, pairs, baseName, newName, compare.Options{})
	if err != nil {
		return nil, err
	}
	return report, report.Apply(rules)
}
