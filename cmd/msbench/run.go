package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/report"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
)

type runFlags struct {
	profile string
	resume  string
	placeFlags
	seed uint64
	// repetitions overrides the profile's count when set: more runs for
	// narrower intervals without editing the study file.
	repetitions int
	// unplaced runs with placement: none, whatever the study says, and
	// sequential without interleaving, to measure what each changes.
	unplaced, sequential bool
	// idle overrides what the deployments waiting their turn in an
	// interleaved step do: run or freeze, to measure what each costs.
	idle string
	// targetWidth adds repetitions until every interval the verdicts
	// read is this narrow (e.g. 10%), within budget and maxRepetitions.
	targetWidth    string
	budget         time.Duration
	maxRepetitions int
	// kubeconfig, when set, deploys every variant on that cluster.
	kubeconfig, kubeContext, namespace, registry string
	generators                                   int
	// baseImages are the images' bases per language, LANG=REF[,LANG=REF].
	baseImages string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run <study name or file>",
		Short: "Carry out a study: build, start, verify, load, measure, report",
		Long: `Carry out a study from studies/NAME/study.yaml (or a file path): build each
service once (cached on a hash of its sources), start the services on free
loopback ports in dependency order for every variant, verify every target,
run the warm-up and measured load steps, account each service's CPU and peak
memory, stop everything, and write the report.

Every repetition runs the variants in a fresh random order, drawn from a
seed that provenance.json records and the log prints; --seed N replays the
orders of a run. Every repetition also measures one variant twice, as two
independent deployments (the study's aa: field; the second is KEY@aa), so
that the report can say how far identical systems come apart on this
machine.

--target-width 10% goes on adding repetitions, after at least 5, until
every interval the verdicts read (each claim's, or for a study without
claims each cell of its comparison with the baseline) is at most 10%
wide, or another repetition would overrun --budget (from this command's
start, estimated from the repetitions it measured), or --max-repetitions
is reached; provenance.json and the report say why it stopped.

Results go to results/<study>-<profile>-<time>/ step by step, so an
interrupted run keeps what finished; --resume DIR continues it in the
orders it began with.`,
		Example: `  msbench run faas-gateway --profile quick
  msbench run studies/faas-gateway/study.yaml --profile paper
  msbench run faas-gateway --profile quick --seed 42
  msbench run faas-gateway --profile quick --no-placement
  msbench run ipc --profile quick --repetitions 3
  msbench run faas-gateway --profile quick --target-width 10% --budget 30m
  msbench run faas-gateway --profile paper --resume results/faas-gateway-paper-20261122-101500`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("run takes one study name or file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return runStudy(cmd, f, nil, args[0])
			}
			return runStudy(cmd, f, &f.seed, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "", "profile of the study file to apply, e.g. quick or paper")
	fl.StringVar(&f.resume, "resume", "", "continue the run in this results directory")
	f.placeFlags.register(fl)
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the variants' order in every repetition (default: drawn at random; a resumed run keeps its own)")
	fl.IntVar(&f.repetitions, "repetitions", 0, "repetitions of every variant, instead of the profile's (a resumed run may be given more, to extend it)")
	fl.BoolVar(&f.unplaced, "no-placement", false, "place nothing on cores, whatever the study's placement: says (to compare a run against a placed one)")
	fl.StringVar(&f.targetWidth, "target-width", "", "add repetitions, after at least 5, until every interval a claim (or, without claims, the comparison) reads is this narrow, e.g. 10%")
	fl.DurationVar(&f.budget, "budget", 0, "with --target-width: add no repetition that would end the run past this long after the command began, e.g. 30m")
	fl.IntVar(&f.maxRepetitions, "max-repetitions", 30, "with --target-width: the most repetitions the run makes")
	fl.StringVar(&f.idle, "idle", "", "what the deployments waiting their turn in an interleaved step do, whatever the study's interleave: says: run, or freeze (stopped until their turn)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "run every variant on this Kubernetes cluster instead of this machine (msbench cluster up prints the local one's)")
	fl.StringVar(&f.kubeContext, "context", "", "with --kubeconfig: the kubeconfig's context to use (default: its current one)")
	fl.StringVar(&f.namespace, "namespace", "", "with --kubeconfig: the namespace the run creates, and deletes at its end (default: named after the run)")
	fl.IntVar(&f.generators, "generators", 1, "with --kubeconfig: pods each step's load is spread over, merged exactly")
	fl.StringVar(&f.registry, "registry", "", "with --kubeconfig: registry the images are pushed to (default: imported into the local cluster of msbench cluster up)")
	fl.StringVar(&f.baseImages, "base-image", "", "with --kubeconfig: base images per language or dependency, KEY=REF[,KEY=REF] (java, native, node, python: a base for a language provides its runtime on PATH; postgres, redis, rabbitmq, mariadb, mongo: the dependency's server programs; default: Debian's)")
	fl.BoolVar(&f.sequential, "sequential", false, "measure every step variant after variant, each deployed alone, instead of interleaving the variants' slices (to compare the two designs)")
	return cmd
}

func runStudy(cmd *cobra.Command, f runFlags, seed *uint64, name string) error {
	start := time.Now()
	path, opts, err := f.locate(name)
	if err != nil {
		return err
	}
	// The analysis' needs are checked on the file as written: a profile may
	// skip steps, which the report then says it could not show.
	whole, err := study.Load(path, "")
	if err != nil {
		return usageError{err}
	}
	if err := analysis.Check(whole); err != nil {
		return usageError{err}
	}
	s, err := study.Load(path, f.profile)
	if err != nil {
		return usageError{err}
	}
	if cmd.Flags().Changed("repetitions") {
		if f.repetitions < 1 {
			return usagef("--repetitions must be at least 1, got %d", f.repetitions)
		}
		s.Repetitions = f.repetitions
	}
	var before float64
	if f.resume != "" {
		// A run that added repetitions (--target-width) goes on from the
		// count it reached, not the study file's.
		var reached int
		if reached, before = resumedFrom(f.resume); !cmd.Flags().Changed("repetitions") {
			s.Repetitions = max(s.Repetitions, reached)
		}
	}
	rule, err := stopOnWidth(cmd.Flags(), f, s, start, before)
	if err != nil {
		return err
	}
	if f.unplaced {
		s.Placement = &study.Placement{None: true}
	}
	switch f.idle {
	case "":
	case "run", "freeze":
		s.Interleave.Freeze = f.idle == "freeze"
	default:
		return usagef("--idle %q: want run or freeze", f.idle)
	}
	if f.sequential {
		for _, st := range s.Load.Steps {
			if st.Interleaved {
				st.Interleaved, st.Sequential = false, "msbench run --sequential"
			}
		}
	}
	// Interrupted while the study file was read (a large one takes a
	// while): nothing ran, so there is no run directory to keep or resume.
	if cmd.Context().Err() != nil {
		return errInterrupted
	}
	if cluster, err := f.cluster(cmd.Flags()); err != nil {
		return err
	} else if cluster != nil {
		opts.Cluster = cluster
	}
	opts.Resume, opts.Seed = f.resume, seed
	opts.Log = cmd.ErrOrStderr()
	opts.TTY = isTerminal(opts.Log)
	if rule != nil {
		opts.Enough, opts.MaxRepetitions = rule.enough, f.maxRepetitions
	}
	dir, runErr := runner.Run(cmd.Context(), s, opts)
	if errors.Is(runErr, runner.ErrSeedConflict) {
		return usageError{runErr}
	}
	if dir != "" {
		if report, err := writeReport(dir, report.Options{}); err != nil {
			runErr = errors.Join(runErr, err)
		} else {
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", report)
		}
	}
	if errors.Is(runErr, runner.ErrInterrupted) {
		fmt.Fprintf(cmd.ErrOrStderr(), "what was measured is kept; continue with: msbench run %s --profile %s --resume %s\n", name, f.profile, dir)
		return errInterrupted
	}
	return runErr
}

// cluster is the cluster the flags name, nil for a run on this machine.
func (f runFlags) cluster(fl *pflag.FlagSet) (*runner.Cluster, error) {
	if f.kubeconfig == "" {
		for _, name := range []string{"context", "namespace", "generators", "registry", "base-image"} {
			if fl.Changed(name) {
				return nil, usagef("--%s is for a run on a cluster: give --kubeconfig too", name)
			}
		}
		return nil, nil
	}
	if f.generators < 1 || f.generators > 64 {
		return nil, usagef("--generators %d: want 1 to 64", f.generators)
	}
	if _, err := os.Stat(f.kubeconfig); err != nil {
		return nil, usagef("--kubeconfig: %v", err)
	}
	bases, err := studyimage.ParseBases(f.baseImages)
	if err != nil {
		return nil, usagef("--base-image: %v", err)
	}
	return &runner.Cluster{
		Target:     kube.Target{Kubeconfig: f.kubeconfig, Context: f.kubeContext},
		Namespace:  f.namespace,
		Generators: f.generators,
		Registry:   f.registry,
		Bases:      bases,
	}, nil
}

// placeFlags say where a command finds the checkout and its data and
// puts its run directories.
type placeFlags struct {
	results, data, root string
}

func (p *placeFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&p.results, "results", "", "where run directories go (default <root>/results)")
	fl.StringVar(&p.data, "data", "", "shared data directory (default <root>/../shared/data)")
	fl.StringVar(&p.root, "root", "", "msbench checkout holding studies/ (default: found from the working directory)")
}

// locate finds the checkout (opts.Root) and the study file that name
// names in it, and the options that place a run of it on disk.
func (p placeFlags) locate(name string) (path string, opts runner.Options, err error) {
	root, err := checkout.Root(p.root)
	if err != nil {
		return "", opts, usageError{err}
	}
	if path, err = study.Find(filepath.Join(root, "studies"), name); err != nil {
		return "", opts, usageError{err}
	}
	opts = runner.Options{
		Root:        root,
		ResultsRoot: orDefault(p.results, filepath.Join(root, "results")),
		CacheDir:    filepath.Join(root, ".cache", "builds"),
		DataDir:     orDefault(p.data, filepath.Join(filepath.Dir(root), "shared", "data")),
		CommandLine: os.Args,
	}
	return path, opts, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
