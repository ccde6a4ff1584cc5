// Package runner carries out a study: it builds the services, starts them
// with fresh ports for every variant, verifies them, drives each load step
// through the load engine, accounts CPU and memory, and writes everything
// into a results directory as it goes.
//
// A variant is deployed through a Lab (lab.go), the run's share of the
// machine; a Deployment is its lab features as modules, started in
// dependency order and stopped in reverse, always (modules.go). The API
// tests deploy through the same Lab (deploytest), so that there is one way
// to start a study's services; docs/backends.md says why, and what the
// next backend implements.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// ErrInterrupted reports a run stopped by its context; what was measured
// is saved and can be resumed.
var ErrInterrupted = errors.New("interrupted")

// ErrSeedConflict reports a --seed that differs from the seed of the run
// being resumed, whose order the resumption must keep.
var ErrSeedConflict = errors.New("seed conflict")

// Options place a run on disk and say how to show progress.
type Options struct {
	Root        string // repository root; build dirs and relative paths start here
	ResultsRoot string // where run directories are made
	CacheDir    string // build cache
	DataDir     string // shared data, e.g. ../shared/data
	Resume      string // an existing run directory to continue
	Log         io.Writer
	TTY         bool
	CommandLine []string
	// Seed draws the order of the variants in every repetition; nil
	// draws a seed at random. Either way it is recorded in
	// provenance.json, and a resumed run keeps the seed it recorded.
	Seed *uint64
	// Enough, when set, is asked after each repetition from the study's
	// count on whether the run has measured enough (the intervals it must
	// give are narrow enough, or its budget is spent), given the run
	// directory; the run adds repetitions until it says so, or up to
	// MaxRepetitions, and records why it stopped in provenance.json.
	Enough         func(dir string, reps int) (done bool, why string, err error)
	MaxRepetitions int
	// Sources, when set, deploys some variants from other checkouts of
	// the study (msbench ab).
	Sources *Sources
	// Cluster, when set, deploys every variant on a Kubernetes cluster
	// instead of this machine.
	Cluster *Cluster
}

type runner struct {
	Lab   // every variant is deployed through it
	opts  Options
	study *study.Study
	run   *results.Run
	prov  results.Provenance
	start time.Time
	order [][]study.Variant // per repetition, from 1
	logMu sync.Mutex        // deployments boot and stop two or more at once
	// booted is how long each variant's deployment took to boot in the
	// last repetition, by variant key: the next one boots the slowest
	// first (see bootQueue).
	booted map[string]time.Duration
}

// Run carries out the study and returns the run directory, which holds
// whatever was measured even when an error is returned.
func Run(ctx context.Context, s *study.Study, opts Options) (string, error) {
	r := &runner{opts: opts, study: s, start: time.Now(), booted: map[string]time.Duration{}}
	r.progress = r.logf
	if err := r.open(ctx); err != nil {
		return "", err
	}
	dir := r.run.Dir
	defer r.close()
	if err := r.buildAll(ctx); err != nil {
		return dir, err
	}
	datasets, err := resolveDatasets(r.study, r.opts.DataDir, r.values)
	if err != nil {
		return dir, err
	}
	r.prov.Datasets = datasets
	for _, ds := range r.study.Datasets {
		f := r.prov.Datasets[ds.Name]
		r.logf("dataset %s: %s %s (%d bytes)", ds.Name, f.Source, f.Path, f.Bytes)
	}
	unplace := func() error { return nil }
	if r.opts.Cluster != nil {
		if err := r.openCluster(ctx); err != nil {
			if ctx.Err() != nil {
				err = ErrInterrupted
			}
			return dir, err
		}
	} else if unplace, err = r.place.placeSelf(); err != nil {
		// Placed once the builds are done, which use every core.
		return dir, err
	}
	err = r.measureAll(ctx)
	if uerr := unplace(); uerr != nil {
		r.logf("warning: %v", uerr)
	}
	if r.cluster == nil {
		// On a cluster the placement becomes CPU requests, which the
		// provenance's cluster says were granted or not.
		r.prov.Placement = r.place.provenance()
	}
	r.prov.EndedAt = time.Now()
	r.prov.Interrupted = errors.Is(err, ErrInterrupted)
	if perr := r.run.WriteProvenance(r.prov); perr != nil {
		err = errors.Join(err, perr)
	}
	return dir, err
}

func (r *runner) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.opts.Log, format+"\n", args...)
}

func (r *runner) open(ctx context.Context) error {
	if err := checkSlices(r.study); err != nil {
		return err
	}
	var err error
	if r.opts.Resume != "" {
		if r.run, err = results.Open(r.opts.Resume); err != nil {
			return err
		}
		st := r.run.State()
		if st.Study != r.study.Name || st.Profile != r.study.Profile {
			return fmt.Errorf("resume %s: it is study %s profile %q, not %s profile %q", r.opts.Resume, st.Study, st.Profile, r.study.Name, r.study.Profile)
		}
		if r.prov, err = r.run.ReadProvenance(); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		// The run keeps the A/A twin it began with (none in a run made
		// before twins), whatever the study file says today.
		began, err := r.run.ReadStudy()
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if began.AA != r.study.AA {
			s := *r.study
			s.AA = began.AA
			r.study = &s
		}
		r.prov.ResumedAt = append(r.prov.ResumedAt, r.start)
	} else {
		if r.run, err = results.Create(r.opts.ResultsRoot, r.study.Name, r.study.Profile, r.start); err != nil {
			return err
		}
		r.prov = results.Machine(ctx, r.opts.Root)
		r.prov.Study, r.prov.Profile, r.prov.StudyFile = r.study.Name, r.study.Profile, r.study.File
		r.prov.StartedAt = r.start
		source, _ := os.ReadFile(r.study.File) // an in-memory study has none
		if err := r.run.WriteStudy(source, r.study); err != nil {
			return err
		}
		// The claims as they stood when the run began are what its report
		// judges; a study without a claims file has none.
		if claimsSource, err := os.ReadFile(filepath.Join(filepath.Dir(r.study.File), claims.FileName)); err == nil {
			if err := r.run.WriteClaims(claimsSource); err != nil {
				return err
			}
		}
	}
	r.prov.CommandLine = r.opts.CommandLine
	how, err := r.chooseOrder()
	if err != nil {
		return err
	}
	if r.place, err = planPlacement(r.study, placement.Available(), false); err != nil {
		return err
	}
	// Half a run placed and half not would compare nothing.
	if was := r.prov.Placement; r.opts.Resume != "" && was != nil && was.Asked != r.place.asked {
		return fmt.Errorf("resume %s: it began with placement %s, not %s (msbench run --no-placement resumes a run that began with it)", r.opts.Resume, was.Asked, r.place.asked)
	}
	// A fresh token key per run and per resumption.
	if err := r.Lab.open(r.study, filepath.Base(r.run.Dir), r.opts.Root, r.opts.DataDir); err != nil {
		return err
	}
	if r.interleaves() {
		// The variants of a repetition run at once: their processes are
		// accounted apart.
		r.deployed = &atomic.Int64{}
	}
	r.place.cpuset = r.acct.Cpuset()
	r.prov.ResourceMethod = r.accounting()
	twin := ""
	if t, ok := r.study.Twin(); ok {
		twin = " + the A/A twin " + t.Key()
	}
	r.logf("study %s (profile %s): %d variants%s × %d steps × %d repetitions; results in %s",
		r.study.Name, orNone(r.study.Profile), len(r.study.Matrix()), twin, len(r.study.Load.Steps), r.study.Repetitions, r.run.Dir)
	r.logf("order: %s", how)
	if r.opts.Cluster == nil {
		r.logf("resource accounting: %s", r.acct.Method())
	}
	r.logf("placement: %s", r.place)
	for _, w := range r.place.warnings {
		r.logf("warning: placement: %s", w)
	}
	return r.run.WriteProvenance(r.prov)
}

func (r *runner) close() {
	if r.cluster != nil {
		if err := r.cluster.close(); err != nil {
			r.logf("warning: cluster: %v", err)
		}
	}
	if err := r.Lab.Close(); err != nil {
		r.logf("warning: %v", err)
	}
}

func (r *runner) buildAll(ctx context.Context) error {
	hashes, err := r.Lab.build(ctx, r.study, r.opts.CacheDir)
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	maps.Copy(r.prov.Builds, hashes)
	if r.opts.Sources != nil {
		if hashes, err = r.Lab.buildSources(ctx, *r.opts.Sources, r.opts.CacheDir); err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return err
		}
		maps.Copy(r.prov.Builds, hashes)
		r.prov.Sources = map[string]string{}
		for name, t := range r.opts.Sources.Trees {
			r.prov.Sources[name] = t.What
		}
	}
	return nil
}

// chooseOrder settles the seed (given, drawn, or the resumed run's) and
// the order of every repetition, records both in the provenance, and says
// how it chose them.
func (r *runner) chooseOrder() (string, error) {
	var how string
	switch {
	case r.opts.Resume != "" && r.prov.Seed == nil:
		if r.opts.Seed != nil {
			return "", fmt.Errorf("resume %s: %w: the run predates seeded orders and continues in the matrix's order; leave out --seed", r.opts.Resume, ErrSeedConflict)
		}
		how = "the matrix's, as the run began (it predates seeded orders)"
	case r.opts.Resume != "":
		if r.opts.Seed != nil && *r.opts.Seed != *r.prov.Seed {
			return "", fmt.Errorf("resume %s: %w: the run is ordered by seed %d, not %d; leave out --seed", r.opts.Resume, ErrSeedConflict, *r.prov.Seed, *r.opts.Seed)
		}
		how = fmt.Sprintf("seed %d, as the run recorded", *r.prov.Seed)
	default:
		var seed uint64
		if r.opts.Seed != nil {
			seed = *r.opts.Seed
			how = fmt.Sprintf("seed %d, as given", seed)
		} else {
			// 53 bits, which every JSON reader holds exactly.
			seed = rand.Uint64() >> 11
			how = fmt.Sprintf("seed %d, drawn at random (--seed %d replays it)", seed, seed)
		}
		r.prov.Seed = &seed
	}
	r.order, r.prov.Order = nil, nil
	for rep := 1; rep <= r.study.Repetitions; rep++ {
		r.orderRep(rep)
	}
	return how, nil
}

// orderRep draws the order of repetition rep, the next one.
func (r *runner) orderRep(rep int) {
	order := r.study.Runs()
	if r.prov.Seed != nil {
		order = Order(*r.prov.Seed, rep, order)
	}
	r.order = append(r.order, order)
	r.prov.Order = append(r.prov.Order, keys(order))
}

// Order returns the variants in the order repetition rep runs them: a
// uniform random permutation (Fisher–Yates) drawn from a PCG generator
// seeded with (seed, rep), so that drift of the machine falls on
// different variants in each repetition, and the same seed always gives
// the same orders (this code, not the standard library's shuffle, fixes
// how numbers become an order).
func Order(seed uint64, rep int, variants []study.Variant) []study.Variant {
	out := slices.Clone(variants)
	shuffle(rand.NewPCG(seed, uint64(rep)), out)
	return out
}

// shuffle permutes xs uniformly at random (Fisher–Yates).
func shuffle[T any](rng *rand.PCG, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := uniform(rng, uint64(i)+1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// uniform returns a number in [0, n), every one equally likely: draws
// below 2⁶⁴ mod n, which would favour the small numbers, are rejected.
func uniform(rng *rand.PCG, n uint64) uint64 {
	reject := -n % n
	for {
		if x := rng.Uint64(); x >= reject {
			return x % n
		}
	}
}

func keys(vs []study.Variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Key()
	}
	return out
}

// measureAll runs repetitions outermost and variants inside them, each
// repetition in its own drawn order, so that drift of a noisy machine over
// time spreads over all variants alike. The A/A twin runs like any other
// variant.
func (r *runner) measureAll(ctx context.Context) error {
	n := 0
	var failed []string
	for rep := 1; ; rep++ {
		if rep > r.study.Repetitions {
			more, err := r.more(rep - 1)
			if err != nil || !more {
				if len(failed) > 0 {
					return errors.Join(err, fmt.Errorf("%d of %d variant runs failed: %v (see state.json and logs/)", len(failed), r.total(), failed))
				}
				return err
			}
		}
		order := r.order[rep-1]
		r.logf("rep %d order: %s", rep, strings.Join(keys(order), ", "))
		if r.interleaves() {
			f, err := r.measureTogether(ctx, rep, order)
			failed = append(failed, f...)
			if err != nil {
				return err
			}
			continue
		}
		for _, v := range order {
			n++
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			if r.variantDone(rep, v) {
				r.logf("[%d/%d] rep %d %s: already measured", n, r.total(), rep, v.Key())
				continue
			}
			r.logf("[%d/%d] rep %d · %s · elapsed %s", n, r.total(), rep, describe(v), time.Since(r.start).Round(time.Second))
			err := r.measureVariant(ctx, rep, v)
			switch {
			case ctx.Err() != nil:
				return ErrInterrupted
			case err != nil:
				key := fmt.Sprintf("rep-%d/%s", rep, v.Key())
				r.logf("  FAILED: %v", err)
				failed = append(failed, key)
				if merr := r.run.MarkFailed(key, err.Error()); merr != nil {
					return merr
				}
			}
		}
	}
}

// total is how many variant runs the run makes so far: more when it adds
// repetitions.
func (r *runner) total() int { return r.study.Repetitions * len(r.study.Runs()) }

// more decides, after reps repetitions, whether to measure another: only
// when the run was asked to go on until it has measured enough (Enough)
// and has not. Going on, it draws the next order and raises the study's
// count, which study.resolved.json keeps.
func (r *runner) more(reps int) (bool, error) {
	if r.opts.Enough == nil {
		return false, nil
	}
	done, why, err := r.opts.Enough(r.run.Dir, reps)
	if err != nil {
		return false, fmt.Errorf("after %d repetitions: %w", reps, err)
	}
	if !done && reps >= r.opts.MaxRepetitions {
		done, why = true, fmt.Sprintf("%s; stopped at the most repetitions asked, %d", why, r.opts.MaxRepetitions)
	}
	r.logf("after %d repetitions: %s", reps, why)
	if done {
		r.prov.Stopped = why
		return false, nil
	}
	r.study.Repetitions = reps + 1
	r.orderRep(reps + 1)
	return true, r.run.WriteStudy(nil, r.study)
}

func (r *runner) variantDone(rep int, v study.Variant) bool {
	for _, st := range r.study.Load.Steps {
		if !r.run.IsDone(results.UnitKey(rep, v.Key(), st.Name)) {
			return false
		}
	}
	return true
}

func (r *runner) measureVariant(ctx context.Context, rep int, v study.Variant) error {
	dep, err := r.bringUp(ctx, rep, v, true)
	if err != nil {
		return err
	}
	stop := func() {
		if dep != nil {
			if serr := dep.stop(); serr != nil {
				r.logf("  warning: stopping services: %v", serr)
			}
			dep = nil
		}
	}
	defer stop()
	for i, st := range r.study.Load.Steps {
		if r.run.IsDone(results.UnitKey(rep, v.Key(), st.Name)) {
			continue
		}
		if err := r.measureStep(ctx, rep, i, v, &dep, nil); err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		if st.Pause > 0 {
			select {
			case <-time.After(st.Pause):
			case <-ctx.Done():
				return ErrInterrupted
			}
		}
	}
	return nil
}

// measureStep measures step i of variant v in one piece on *dep, which a
// fresh step replaces with a new deployment, and marks it done.
func (r *runner) measureStep(ctx context.Context, rep, i int, v study.Variant, dep **Deployment, others []*Deployment) error {
	st := r.study.Load.Steps[i]
	if st.Fresh {
		r.logf("  %s: restarting everything for cold caches", st.Name)
		old := *dep
		*dep = nil
		if err := old.stop(); err != nil {
			r.logf("  warning: stopping services: %v", err)
		}
		var err error
		if *dep, err = r.bringUp(ctx, rep, v, false); err != nil {
			return err
		}
	}
	if err := r.measurement(rep, i, v, *dep).run(ctx, others); err != nil {
		return err
	}
	return r.run.MarkDone(results.UnitKey(rep, v.Key(), st.Name))
}

// measurement is step i of variant v on dep.
func (r *runner) measurement(rep, i int, v study.Variant, dep *Deployment) *measurement {
	st := r.study.Load.Steps[i]
	return &measurement{
		step:    st,
		label:   fmt.Sprintf("  %s [%d/%d]", st.Name, i+1, len(r.study.Load.Steps)),
		dir:     r.run.StepDir(rep, v.Key(), st.Name),
		baseURL: "http://" + dep.loadAddr(r.study.Load.Service),
		service: r.study.Load.Service,
		dep:     dep,
		method:  r.accounting(),
		log:     r.opts.Log,
		tty:     r.opts.TTY,
	}
}

// bringUp starts the dependencies and services of a variant and sends the
// setup requests; the first bring-up of a variant also verifies every
// target and records the start-up (a fresh one for a cold-cache step must
// not warm anything).
func (r *runner) bringUp(ctx context.Context, rep int, v study.Variant, first bool) (*Deployment, error) {
	dep, _, err := r.boot(ctx, v, rep, r.place)
	if err != nil {
		return nil, err
	}
	if err := r.greet(ctx, rep, v, dep, first, time.Time{}); err != nil {
		return nil, err
	}
	return dep, nil
}

// boot deploys v with its services placed by place and waits until they
// are ready; took is how long that was.
func (r *runner) boot(ctx context.Context, v study.Variant, rep int, place *cpuPlan) (dep *Deployment, took time.Duration, err error) {
	started := time.Now()
	dep, err = r.deployOn(ctx, r.study, v, r.run.LogDir(rep, v.Key()), place)
	if err != nil {
		return nil, 0, err
	}
	for _, w := range dep.warnings {
		r.logf("  warning: %s", w)
	}
	took = time.Since(started)
	r.logf("  %s ready in %.2fs", v.Key(), took.Seconds())
	return dep, took, nil
}

// greet sends a booted deployment the study's setup and, on its first
// deployment, its first requests, recorded with its start-up; readyAt is
// when it was ready, if it waited since (zero: it did not). On error the
// deployment is stopped.
func (r *runner) greet(ctx context.Context, rep int, v study.Variant, dep *Deployment, first bool, readyAt time.Time) error {
	var waited time.Duration
	if !readyAt.IsZero() {
		waited = time.Since(readyAt)
	}
	target := dep.instance(r.study.Load.Service)
	base := "http://" + dep.loadAddr(r.study.Load.Service)
	var log *results.FirstRequests
	if first {
		log = &results.FirstRequests{}
	}
	err := setup(ctx, dep.client(), r.study.Setup, base, dep.values, log)
	if err == nil && first {
		err = verify(ctx, dep.client(), r.study.Load.Steps, base, dep.values, log)
	}
	if first {
		err = errors.Join(err, r.saveStartup(rep, v, dep, target, log, waited))
	}
	if err != nil {
		if serr := dep.stop(); serr != nil {
			r.logf("  warning: stopping services: %v", serr)
		}
		return err
	}
	return nil
}

// saveStartup writes how long each instance took to become ready and the
// first requests the load's service answered, with their latencies.
func (r *runner) saveStartup(rep int, v study.Variant, dep *Deployment, target *instance, first *results.FirstRequests, waited time.Duration) error {
	st := results.Startup{FirstRequests: first.Requests, Links: dep.linkSettings(), Hosts: dep.hostSettings(), WaitedS: waited.Seconds()}
	if len(st.Hosts) > 0 {
		st.LabAddr = dep.listenHost()
	}
	for _, in := range dep.instances {
		if in.dep {
			continue
		}
		st.Instances = append(st.Instances, results.InstanceStartup{Name: in.name, ReadyS: in.ready.Sub(in.started).Seconds()})
	}
	if at, ok := first.FirstSuccess(); ok {
		st.FirstSuccessS = (at.Sub(target.started) - waited).Seconds()
	}
	return r.run.VariantDir(rep, v.Key()).WriteStartup(st)
}

func describe(v study.Variant) string {
	s := ""
	for i, kv := range v.Values {
		if i > 0 {
			s += " "
		}
		s += kv[0] + "=" + kv[1]
	}
	if s == "" {
		s = "default"
	}
	if v.Twin {
		s += " (A/A twin)"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
