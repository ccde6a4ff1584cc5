package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// Interleaved measurement (Abedi & Brecht's randomized multiple
// interleaved trials): a repetition deploys every variant at once, and an
// interleaved step is cut into rounds; in each round every variant takes
// one slice of the load, in a fresh random order. Slow drift of the
// machine and bursts of steal then fall on every variant alike instead of
// between them, and the variants of a repetition are compared over the
// same stretch of time. A variant's step is still one unit: its slices'
// summaries merged, its records in one file. The unit of replication
// stays the deployment: slices of one repetition share it, so the
// intervals over repetitions are what the verdicts read.

// member is one variant's deployment in a repetition measured together.
type member struct {
	v      study.Variant
	dep    *Deployment
	failed bool
}

// interleaves reports whether the run measures variants together: some
// step is interleaved.
func (r *runner) interleaves() bool {
	for _, st := range r.study.Load.Steps {
		if st.Interleaved {
			return true
		}
	}
	return false
}

// measureTogether runs one repetition with every variant deployed at
// once: its steps in order, an interleaved one in rounds of slices, the
// others variant after variant in the repetition's order. A variant that
// fails is marked so and left out of the rest; what it measured is kept.
// It returns the keys of the variants that failed.
func (r *runner) measureTogether(ctx context.Context, rep int, order []study.Variant) ([]string, error) {
	var members []*member
	var failed []string
	fail := func(m *member, err error) error {
		key := fmt.Sprintf("rep-%d/%s", rep, m.v.Key())
		r.logf("  FAILED %s: %v", m.v.Key(), err)
		failed = append(failed, key)
		m.failed = true
		if m.dep != nil {
			if serr := m.dep.stop(); serr != nil {
				r.logf("  warning: stopping %s: %v", m.v.Key(), serr)
			}
			m.dep = nil
		}
		return r.run.MarkFailed(key, err.Error())
	}
	defer func() { r.stopAll(members) }()
	type pending struct {
		m   *member
		pos int // in the repetition's order, from 1
	}
	var todo []pending
	for i, v := range order {
		if r.variantDone(rep, v) {
			r.logf("rep %d · %s: already measured", rep, v.Key())
			continue
		}
		m := &member{v: v}
		members = append(members, m)
		todo = append(todo, pending{m, i + 1})
	}
	deployLine := func(p pending, where string) {
		r.logf("rep %d · deploy %d/%d · %s%s · elapsed %s", rep, p.pos, len(order), describe(p.m.v), where, time.Since(r.start).Round(time.Second))
	}
	if lent := r.place.lent(); lent != nil && len(todo) > 1 && r.cluster == nil {
		// Two at a time, the second's services on lent cores: a boot
		// that fills its core (a JVM's) then takes half the
		// repetition's time. Every one is greeted once all are up, one
		// after another in the order, so that no first request is timed
		// while another deployment boots.
		readyAt := make([]time.Time, len(todo))
		errs := make([]error, len(todo))
		took, last := make([]time.Duration, len(todo)), make([]time.Duration, len(todo))
		for i, p := range todo {
			last[i] = r.booted[p.m.v.Key()]
		}
		queue := bootQueue(last)
		var mu sync.Mutex
		next := 0
		var wg sync.WaitGroup
		for _, place := range []*cpuPlan{r.place, lent} {
			wg.Go(func() {
				for {
					mu.Lock()
					k := next
					next++
					mu.Unlock()
					if k >= len(queue) || ctx.Err() != nil {
						return
					}
					i := queue[k]
					p := todo[i]
					where := ""
					if place == lent {
						where = fmt.Sprintf(" · booting on core(s) %s, where no service runs, then moved home", lent.lentCores)
					}
					deployLine(p, where)
					dep, d, err := r.boot(ctx, p.m.v, rep, place)
					if err == nil && place == lent {
						if err = dep.settle(r.place); err != nil {
							err = errors.Join(fmt.Errorf("move %s home: %w", p.m.v.Key(), err), dep.stop())
							dep = nil
						}
					}
					p.m.dep, errs[i], readyAt[i], took[i] = dep, err, time.Now(), d
				}
			})
		}
		wg.Wait()
		for i, p := range todo {
			if errs[i] == nil {
				r.booted[p.m.v.Key()] = took[i]
			}
		}
		if ctx.Err() != nil {
			return failed, ErrInterrupted
		}
		for i, p := range todo {
			err := errs[i]
			if err == nil {
				if err = r.greet(ctx, rep, p.m.v, p.m.dep, true, readyAt[i]); err != nil {
					p.m.dep = nil // greet stopped it
				}
			}
			if ctx.Err() != nil {
				return failed, ErrInterrupted
			}
			if err != nil {
				if ferr := fail(p.m, err); ferr != nil {
					return failed, ferr
				}
			}
		}
	} else {
		for _, p := range todo {
			deployLine(p, "")
			var err error
			if p.m.dep, err = r.bringUp(ctx, rep, p.m.v, true); err != nil {
				if ctx.Err() != nil {
					return failed, ErrInterrupted
				}
				if ferr := fail(p.m, err); ferr != nil {
					return failed, ferr
				}
			}
		}
	}
	for i, st := range r.study.Load.Steps {
		var todo []*member
		for _, m := range members {
			if !m.failed && !r.run.IsDone(results.UnitKey(rep, m.v.Key(), st.Name)) {
				todo = append(todo, m)
			}
		}
		if len(todo) == 0 {
			continue
		}
		var err error
		if st.Interleaved && len(todo) > 1 {
			err = r.interleave(ctx, rep, i, todo, members, fail)
		} else {
			err = r.oneByOne(ctx, rep, i, todo, members, fail)
		}
		if err != nil {
			return failed, err
		}
		if st.Pause > 0 {
			select {
			case <-time.After(st.Pause):
			case <-ctx.Done():
				return failed, ErrInterrupted
			}
		}
	}
	return failed, nil
}

// bootQueue is the order in which two workers boot a repetition's
// deployments, as indices into last, each one's boot in the repetition
// before: the slowest first (0 where unknown: the first repetition, or a
// resumed run, keeps the repetition's order). Two workers finish a
// repetition's boots soonest when its long boots start first:
// frameworks' two Spring deployments (70-80 s on a core each) against 5 s
// or less for the rest, where one Spring deployment drawn fifth in the
// order started 10 s after the other and ended the boots that much later.
func bootQueue(last []time.Duration) []int {
	queue := make([]int, len(last))
	for i := range queue {
		queue[i] = i
	}
	slices.SortStableFunc(queue, func(a, b int) int { return cmp.Compare(last[b], last[a]) })
	return queue
}

// oneByOne measures step i of each member in one piece, one after the
// other, in the repetition's order. The repetition's other deployments
// run on meanwhile, as they do between slices, and their CPU is the run's.
func (r *runner) oneByOne(ctx context.Context, rep, i int, todo, members []*member, fail func(*member, error) error) error {
	st := r.study.Load.Steps[i]
	for _, m := range todo {
		err := r.measureStep(ctx, rep, i, m.v, &m.dep, waiting(members, m))
		switch {
		case ctx.Err() != nil:
			return ErrInterrupted
		case err != nil:
			if ferr := fail(m, fmt.Errorf("step %s: %w", st.Name, err)); ferr != nil {
				return ferr
			}
		}
	}
	return nil
}

// stopAll stops the deployments of a repetition all at once: nothing is
// measured while they stop, and each one's JVMs take seconds.
func (r *runner) stopAll(members []*member) {
	var wg sync.WaitGroup
	for _, m := range members {
		if m.dep == nil {
			continue
		}
		wg.Go(func() {
			if err := m.dep.stop(); err != nil {
				r.logf("  warning: stopping %s: %v", m.v.Key(), err)
			}
		})
	}
	wg.Wait()
}

// waiting is the deployments of members other than m that are up.
func waiting(members []*member, m *member) []*Deployment {
	var out []*Deployment
	for _, o := range members {
		if o != m && o.dep != nil {
			out = append(out, o.dep)
		}
	}
	return out
}

// interleave measures step i of the todo members in rounds of slices.
func (r *runner) interleave(ctx context.Context, rep, i int, todo, members []*member, fail func(*member, error) error) error {
	st := r.study.Load.Steps[i]
	w := r.study.Interleave
	ms := make([]*measurement, len(todo))
	logs := make([]results.Slices, len(todo))
	for j, m := range todo {
		ms[j] = r.measurement(rep, i, m.v, m.dep)
		ms[j].label += " " + m.v.Key()
		if err := ms[j].open(); err != nil {
			ms[j].abandon()
			ms[j] = nil
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			if ferr := fail(m, fmt.Errorf("step %s: %w", st.Name, err)); ferr != nil {
				return ferr
			}
		}
	}
	defer func() {
		for _, m := range ms {
			if m != nil {
				m.abandon()
			}
		}
	}()
	rounds := len(sliceLoad(st.Load, w))
	idle := "running"
	if w.Freeze {
		idle = "frozen"
		defer func() {
			for _, m := range members {
				if m.dep != nil {
					if err := m.dep.thaw(); err != nil {
						r.logf("  warning: continuing %s: %v", m.v.Key(), err)
					}
				}
			}
		}()
	}
	warm := fmt.Sprintf("each after %v of warm-up", w.Warmup)
	switch {
	case st.Warmup.Set() && rounds == 1:
		warm = "each after the step's warm-up"
	case st.Warmup.Set():
		warm = fmt.Sprintf("a variant's first after the step's warm-up, the rest after %v of warm-up", w.Warmup)
	}
	plural := "s"
	if rounds == 1 {
		plural = ""
	}
	r.logf("  %s [%d/%d]: interleaved, %d round%s of %d slices (%s; the others %s meanwhile)", st.Name, i+1, len(r.study.Load.Steps), rounds, plural, len(todo), warm, idle)
	for round := 1; round <= rounds && slices.ContainsFunc(ms, func(m *measurement) bool { return m != nil }); round++ {
		perm := sliceOrder(r.seed(), rep, i, round, len(todo))
		var names []string
		for _, j := range perm {
			names = append(names, todo[j].v.Key())
		}
		r.logf("  %s round %d/%d: %s", st.Name, round, rounds, strings.Join(names, ", "))
		for pos, j := range perm {
			m := ms[j]
			if m == nil {
				continue
			}
			started := time.Now()
			lead, err := r.turn(ctx, m, w, round, waiting(members, todo[j]))
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			if err == nil {
				// What its slices measured is kept, as a step in one piece
				// keeps what it measured before a crash.
				if err = crashed(m.dep); err != nil {
					err = errors.Join(err, m.finish(ctx))
				}
			}
			if err != nil {
				m.abandon()
				ms[j] = nil
				if ferr := fail(todo[j], fmt.Errorf("step %s, slice %d: %w", st.Name, round, err)); ferr != nil {
					return ferr
				}
				continue
			}
			p := m.pieces[len(m.pieces)-1]
			logs[j].Slices = append(logs[j].Slices, results.Slice{
				Number: round, Round: round, Position: pos + 1, Of: len(perm), StartedAt: started,
				DurationS: p.DurationS, Requests: p.Requests, P50Ms: p.Latency.P50, P99Ms: p.Latency.P99, Valid: p.Valid, Lead: lead,
			})
		}
	}
	for j, m := range ms {
		if m == nil {
			continue
		}
		ms[j] = nil
		logs[j].Rounds, logs[j].Warmup = rounds, w.Warmup
		err := m.finish(ctx)
		if err == nil {
			err = m.dir.WriteSlices(logs[j])
		}
		if err == nil {
			err = r.run.MarkDone(results.UnitKey(rep, todo[j].v.Key(), st.Name))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// turn is m's slice of round: with the waiting deployments frozen if the
// study says so, m's own continued for it. lead: see slice.
func (r *runner) turn(ctx context.Context, m *measurement, w study.Interleaving, round int, others []*Deployment) (lead bool, err error) {
	if !w.Freeze {
		return r.slice(ctx, m, w, round, others)
	}
	var errs []error
	for _, o := range others {
		errs = append(errs, o.freeze())
	}
	errs = append(errs, m.dep.thaw())
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return r.slice(ctx, m, w, round, others)
}

// freeze stops every process of d where it stands (SIGSTOP of each
// process group, services and dependencies alike), so that a deployment
// waiting its turn uses no CPU; thaw continues them, the dependencies
// first, so that a service's first call after it finds them running.
func (d *Deployment) freeze() error {
	var errs []error
	for _, in := range d.instances {
		errs = append(errs, gone(in.proc.Pause()))
	}
	return errors.Join(errs...)
}

func (d *Deployment) thaw() error {
	var errs []error
	for _, dep := range []bool{true, false} {
		for _, in := range d.instances {
			if in.dep == dep {
				errs = append(errs, gone(in.proc.Resume()))
			}
		}
	}
	return errors.Join(errs...)
}

// gone drops the error of signalling a process that has exited: the
// crash check after the slice says so, with its log.
func gone(err error) error {
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// slice sends one slice of m's step: its warm-up, not counted, then the
// measured part of round. A variant's first slice is warmed by the
// step's own warm-up where it has one, sent right before it as before a
// step in one piece: a second, the slice's, would only lengthen the
// repetition (at 200 of ipc's users, by 3 s a variant and step). A later
// slice's warm-up is a lead where sliceLead finds one fits. lead says
// whether it was.
func (r *runner) slice(ctx context.Context, m *measurement, w study.Interleaving, round int, others []*Deployment) (lead bool, err error) {
	spec := m.spec()
	slices := sliceLoad(spec, w)
	if lead := sliceLead(m, slices[round-1], w); lead > 0 {
		return true, m.piece(ctx, slices[round-1], int32(round), others, lead)
	}
	first := len(m.pieces) == 0
	if first && m.step.Warmup.Set() {
		err = m.warmup(ctx)
	} else {
		_, err = m.load(ctx, sliceWarmup(spec, w, m.step.Warmup, len(slices)), fmt.Sprintf("slice %d warm-up", round), nil, 0, nil)
	}
	if err == nil && first {
		err = m.ready(ctx)
	}
	if err != nil {
		return false, err
	}
	return false, m.piece(ctx, slices[round-1], int32(round), others, 0)
}

// leadCycles is how many of its users' cycles (answer and think) a
// slice's window must hold for its warm-up to be a lead. A user is in
// the middle of one when the lead ends: its first measured request comes
// up to a cycle later, while the server still answers the lead's. In a
// window of a cycle or two that leaves the users whose lead answers came
// back early (p50 3.1-5.5 s against 4.5-6.2 s at ipc's 200 users;
// frameworks' per-request Micro: 27-86 requests against 189-196).
const leadCycles = study.SteadyCycles

// sliceLead is the lead a slice of m's step warms up with, sliceWarmup's
// length, so that the users go on into the measured part without a pause
// (load.Config.Lead): no first wave is measured and no time goes to
// waiting for a warm-up's last answers. It is 0, and the warm-up a load
// of its own, for a variant's first slice (nothing says yet how long a
// cycle takes), where the last slice measured says the window holds fewer
// than leadCycles cycles, and where a lead cannot be: an open load, a
// generator on a cluster, a count-bound warm-up, events timed from the
// measured part's start.
func sliceLead(m *measurement, slice loadspec.Spec, w study.Interleaving) time.Duration {
	if len(m.pieces) == 0 || slice.Open || m.dep.pods != nil || slice.Iterations > 0 || m.step.Warmup.Requests > 0 || len(m.step.Events) > 0 {
		return 0
	}
	if !leadFits(m.pieces[len(m.pieces)-1], slice) {
		return 0
	}
	return sliceWarmupLength(slice, w)
}

// sliceWarmupLength is how long a slice of spec warms up: w.Warmup, and
// its users' longest think time, so that each may send.
func sliceWarmupLength(spec loadspec.Spec, w study.Interleaving) time.Duration {
	return w.Warmup + spec.Think.Max
}

// leadFits says whether slice's window holds leadCycles of its users'
// cycles, as last, the slice before it, measured them: its median answer
// and the mean think time. A window bounded by a count is the count at
// last's throughput.
func leadFits(last metrics.Summary, slice loadspec.Spec) bool {
	cycle := time.Duration(last.Latency.P50*float64(time.Millisecond)) + (slice.Think.Min+slice.Think.Max)/2
	window := slice.Duration
	if slice.Requests > 0 {
		if last.ThroughputRPS <= 0 {
			return false
		}
		byCount := time.Duration(float64(slice.Requests) / last.ThroughputRPS * float64(time.Second))
		if window == 0 || byCount < window {
			window = byCount
		}
	}
	return window >= leadCycles*cycle
}

// checkSlices holds every slice of every interleaved step, and its
// warm-up, to the checks a load must pass, before anything starts: a
// shape the cutting makes invalid is the study's error, not every
// variant's failure in the middle of the run.
func checkSlices(s *study.Study) error {
	var errs []error
	for _, st := range s.Load.Steps {
		if !st.Interleaved {
			continue
		}
		slices := sliceLoad(st.Load, s.Interleave)
		for _, sp := range append(slices, sliceWarmup(st.Load, s.Interleave, st.Warmup, len(slices))) {
			if err := sp.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("step %s cut into %d slices (interleave: in %s): %w", st.Name, len(slices), s.File, err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// seed is the run's seed of orders; a run that predates seeds has 0.
func (r *runner) seed() uint64 {
	if r.prov.Seed != nil {
		return *r.prov.Seed
	}
	return 0
}

// sliceLoad cuts a step's load into the slices of its rounds, which
// together send what the step sends in one piece: a step bounded by time
// gets one round per slice length of it, its time shared out; one bounded
// by a count only, w.Rounds rounds (fewer where a slice would hold fewer
// requests than users), its count shared out, except that an open
// model's count at a rate is a time too. Each slice draws its own
// arrivals.
func sliceLoad(spec loadspec.Spec, w study.Interleaving) []loadspec.Spec {
	d := spec.Duration
	switch {
	case d == 0 && spec.Requests == 0:
		d = loadspec.DefaultDuration
	case d == 0 && spec.Open && spec.Rate > 0:
		d = time.Duration(float64(spec.Requests) / spec.Rate * float64(time.Second))
	}
	rounds := w.Rounds
	if d > 0 {
		rounds = int(math.Round(float64(d) / float64(w.Slice)))
	}
	if spec.Duration > 0 && spec.Think.Max > 0 {
		// A slice shorter than two think times would let a user send
		// once at most.
		rounds = min(rounds, int(spec.Duration/(2*spec.Think.Max)))
	}
	if !spec.Open && spec.Duration == 0 && spec.Requests > 0 {
		// A slice of fewer requests than users would send them all at
		// once: less concurrency than the step in one piece, another
		// load (faas-gateway's 10 resizes of 150 users, as 5 slices of 2).
		rounds = int(min(int64(rounds), spec.Requests/int64(cmp.Or(spec.Users, loadspec.DefaultUsers))))
	}
	rounds = max(1, rounds)
	if spec.Requests > 0 {
		rounds = int(min(int64(rounds), spec.Requests))
	}
	out := make([]loadspec.Spec, rounds)
	for k := range out {
		s := spec
		s.Seed = spec.Seed + uint64(k)
		if spec.Duration > 0 || spec.Requests == 0 {
			s.Duration = share(cmp.Or(spec.Duration, loadspec.DefaultDuration), rounds, k)
		}
		if spec.Requests > 0 {
			s.Requests = int64(share(time.Duration(spec.Requests), rounds, k))
		}
		out[k] = s
	}
	return out
}

// share is slice k's part of a total cut into n: equal parts, the first
// ones a unit larger where it does not divide.
func share(total time.Duration, n, k int) time.Duration {
	part := total / time.Duration(n)
	if time.Duration(k) < total%time.Duration(n) {
		part++
	}
	return part
}

// sliceWarmup is the load a slice sends before its measured part,
// counted nowhere, so that connections are open, and caches and JITs
// awake again after the variant's wait: the step's load for w.Warmup
// (and its users' longest think time, so that each may send), or until it
// has sent its share of the step's own warm-up count, whichever comes
// first. The count keeps a slice of heavy requests from queueing a burst
// as large as its users behind the warm-up's end.
func sliceWarmup(spec loadspec.Spec, w study.Interleaving, warmup study.Warmup, rounds int) loadspec.Spec {
	spec.Duration, spec.Requests, spec.Iterations, spec.Stages = sliceWarmupLength(spec, w), 0, 0, nil
	if warmup.Requests > 0 {
		spec.Requests = max(1, warmup.Requests/int64(rounds))
	}
	return spec
}

// sliceOrder is the order in which n variants take their slices in round
// of step i of repetition rep: a uniform random permutation, fresh in
// every round and repeatable from the run's seed.
func sliceOrder(seed uint64, rep, i, round, n int) []int {
	perm := make([]int, n)
	for k := range perm {
		perm[k] = k
	}
	shuffle(rand.NewPCG(seed, uint64(rep)<<40|uint64(i+1)<<20|uint64(round)), perm)
	return perm
}
