// Package load is msbench's load engine: it sends HTTP/1.1 requests over
// keep-alive connections in a closed model (users that send, wait and think)
// or an open model (arrivals at a fixed or ramping rate), measures latency
// from each arrival's intended time, and records every request. One loop
// sends both models' arrivals and times every answer alike: see loop.
package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/placement"
)

// Config describes one load. Exactly one model applies: the open model when
// Pacer is set, the closed model otherwise.
type Config struct {
	Targets     []Target
	Connections int           // keep-alive connections, the most requests in flight
	Timeout     time.Duration // per request; a timed-out request is an error with latency = Timeout
	Insecure    bool          // https: accept any server certificate

	// Closed model: each user sends, waits for the answer, then thinks.
	Users      int
	Think      Think
	Iterations int // per user; 0 means no limit

	// Open model.
	Pacer  Schedule
	Pacing Pacing
	Tick   time.Duration // coarse pacing's grid of wake-ups; 0 for precise

	Duration    time.Duration // closed model: no request starts after it; 0 means no limit
	MaxRequests int64         // across all users; 0 means no limit

	// Lead is a closed load's warm-up, sent by the same users without a
	// pause: requests meant to leave in the first Lead are answered but
	// never recorded or counted, and the measured load (its Duration, its
	// MaxRequests) starts where the lead ends, with every user in its
	// stride. A warm-up sent as a load of its own ends by waiting for its
	// last answers, and the measured load then starts every user at once:
	// at 200 users of a page that takes 5 s, that is 5 s of waiting and a
	// first wave measured. A user is mid-cycle when the lead ends, so a
	// window should hold several cycles: in one, only the users whose
	// lead answers came back early are measured.
	Lead time.Duration

	// TagHeader names a response header whose unsigned number is kept with
	// each record, e.g. the data version a cache served, so that stale
	// answers can be counted afterwards.
	TagHeader string

	// MinSuccess is the share of successful requests (0 to 1) under which
	// the run is invalid: a load whose requests all failed measured the
	// failure, not the server. 0 accepts any.
	MinSuccess float64

	// AllowRemote lets the load go to a host that is not this machine;
	// by default every address the target's host names must be loopback.
	AllowRemote bool

	// Start, when set, is the load's time zero: Run waits for it and
	// measures every intended time from it, so that generators started on
	// several machines at one agreed instant send one schedule.
	Start time.Time
}

// Pacing chooses how the open model waits for an arrival's time.
type Pacing int

const (
	// Precise wakes at an arrival's slot through a high-resolution
	// timer and sends with it the arrivals due within preciseWindow
	// (250 µs) behind it, so a request leaves at most that, plus the
	// kernel's wake-up latency, after its slot. It costs a wake-up of the
	// generator per arrival below 4,000 req/s, one per 250 µs above.
	Precise Pacing = iota
	// Coarse wakes on a grid of ticks and sends, in each, every arrival
	// whose slot has come: a request leaves up to a tick late (counted in
	// latency and shown as schedule lag), and one wake-up serves many
	// requests. See loop.
	Coarse
)

// DefaultTick keeps coarse pacing's lag under the 1 ms that counts as a
// late start, while a wake-up at 20,000 req/s still serves ten requests.
const DefaultTick = 500 * time.Microsecond

// ParsePacing reads "precise" or "coarse".
func ParsePacing(s string) (Pacing, error) {
	switch s {
	case "precise":
		return Precise, nil
	case "coarse":
		return Coarse, nil
	}
	return 0, fmt.Errorf("pacing %q: want precise or coarse", s)
}

func (p Pacing) String() string {
	if p == Coarse {
		return "coarse"
	}
	return "precise"
}

func (p Pacing) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

func (p *Pacing) UnmarshalText(b []byte) (err error) {
	*p, err = ParsePacing(string(b))
	return err
}

// Think is a pause drawn uniformly from [Min, Max].
type Think struct{ Min, Max time.Duration }

// Sink receives every record, in batches, from a single goroutine.
type Sink interface {
	Write(batch []metrics.Record) error
}

// Options are what the caller observes a run through.
type Options struct {
	Sink          Sink
	Progress      func(Snapshot)
	ProgressEvery time.Duration
	// Measuring, if set, is called once when the measured load begins:
	// at the start, or, after a lead, on a goroutine of its own when the
	// lead ends, so that what the caller reads then (the server's CPU so
	// far) bounds the same window as the summary. Run returns after it
	// has; a load cut short during its lead never calls it.
	Measuring func()
}

// Snapshot is the state of a run for a progress display.
type Snapshot struct {
	Elapsed  time.Duration
	Requests int64 // answered or failed
	// InFlight were sent and are not yet answered, the lead's too: a
	// closed load of slow answers shows its users here long before
	// Requests moves.
	InFlight int64
	Errors   int64
	RateRPS  float64 // over the last interval
	P99Ms    float64 // corrected, since the start
}

// Engine runs one configured load. Build it with New; Run it once.
type Engine struct {
	cfg     Config
	targets []prepared
	mix     mix
	names   metrics.Names
	agg     *metrics.Aggregator
	addr    unix.Sockaddr // the one address checked, dialled by the loop
	family  int
	tls     *tls.Config // https; nil for plain http

	base     time.Time
	baseUnix int64
	seq      atomic.Int64 // next sequence number; also the count of claimed requests
	// inFlight is the loop's busy connections as of its last turn, for
	// progress: the loop's own count, published once a turn.
	inFlight atomic.Int64
	batches  chan []metrics.Record
	free     chan []metrics.Record
	dropped  atomic.Int64 // Server-Timing metrics beyond MaxTimings or the name table
	badTimes atomic.Int64 // malformed Server-Timing entries
	// unstamped counts answers the kernel gave no receive stamp for,
	// ended at the moment they were read instead.
	unstamped atomic.Int64
	// afterFunc starts the measured load when a lead ends: time.AfterFunc,
	// or a late one in tests, as a busy machine's can be.
	afterFunc func(time.Duration, func()) *time.Timer
}

// batchSize trades how fresh the live view is against per-batch overhead;
// batches also flush after batchAge.
const (
	batchSize = 256
	batchAge  = int64(200 * time.Millisecond)
)

// New checks the configuration and prepares every request once.
func New(cfg Config) (*Engine, error) {
	if len(cfg.Targets) == 0 {
		return nil, errors.New("no target to load")
	}
	if cfg.Connections < 1 {
		return nil, errors.New("connections must be at least 1")
	}
	if cfg.Timeout <= 0 {
		return nil, errors.New("timeout must be positive")
	}
	if !(cfg.MinSuccess >= 0 && cfg.MinSuccess <= 1) {
		return nil, fmt.Errorf("the minimum success rate %v must lie between 0 and 1", cfg.MinSuccess)
	}
	if cfg.Pacer == nil {
		if cfg.Users < 1 {
			return nil, errors.New("users must be at least 1")
		}
		if cfg.Think.Min < 0 || cfg.Think.Max < cfg.Think.Min {
			return nil, fmt.Errorf("think time %v-%v is not a range", cfg.Think.Min, cfg.Think.Max)
		}
		if cfg.Duration <= 0 && cfg.MaxRequests <= 0 && cfg.Iterations <= 0 {
			return nil, errors.New("the load is unbounded: give a duration, a request count or iterations")
		}
	}
	switch {
	case cfg.Lead < 0:
		return nil, fmt.Errorf("the lead %v is negative", cfg.Lead)
	case cfg.Lead > 0 && cfg.Pacer != nil:
		return nil, errors.New("a lead is the closed model's: an open load's warm-up is a load of its own")
	case cfg.Lead > 0 && cfg.Iterations > 0:
		return nil, errors.New("a lead cannot go with iterations: whether the lead's requests count among a user's would be a guess")
	}
	addr, isTLS, err := hostOf(cfg.Targets)
	if err != nil {
		return nil, err
	}
	m, err := newMix(cfg.Targets)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, mix: m}
	if cfg.Pacer != nil && cfg.Pacing == Coarse && cfg.Tick <= 0 {
		return nil, errors.New("coarse pacing needs a positive tick")
	}
	for _, t := range cfg.Targets {
		p, err := prepare(t)
		if err != nil {
			return nil, err
		}
		e.targets = append(e.targets, p)
	}
	// Last of the checks, so that a mistake in a target is reported
	// before a name is looked up; never after a connection.
	lookupCtx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	dial, err := resolveTarget(lookupCtx, addr, cfg.AllowRemote, net.DefaultResolver.LookupNetIP)
	cancel()
	if err != nil {
		return nil, err
	}
	e.addr, e.family = sockaddr(dial)
	if isTLS {
		// The certificate is checked against the name in the URL, not
		// the address dialled. Insecure is asked for explicitly, for
		// self-signed test servers.
		host, _, _ := net.SplitHostPort(addr)
		e.tls = &tls.Config{ServerName: host, InsecureSkipVerify: cfg.Insecure}
	}
	e.agg = metrics.NewAggregator(&e.names)
	return e, nil
}

// hostOf returns the one host all targets share: a load is aimed at one
// service, and one connection pool serves it.
func hostOf(targets []Target) (addr string, isTLS bool, err error) {
	for i, t := range targets {
		u, err := ValidateURL(t.URL)
		if err != nil {
			return "", false, err
		}
		a := hostPort(u)
		if i == 0 {
			addr, isTLS = a, u.Scheme == "https"
		} else if a != addr {
			return "", false, fmt.Errorf("targets go to %s and %s: one load drives one host", addr, a)
		}
	}
	return addr, isTLS, nil
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}

// now is the current time as unix nanoseconds, read from the monotonic clock.
func (e *Engine) now() int64 { return e.baseUnix + int64(time.Since(e.base)) }

// Names lists the Server-Timing metric names seen, by index.
func (e *Engine) Names() *metrics.Names { return &e.names }

// TargetNames lists target names by index, as records refer to them.
func (e *Engine) TargetNames() []string {
	out := make([]string, len(e.cfg.Targets))
	for i, t := range e.cfg.Targets {
		out[i] = t.Name
		if out[i] == "" {
			out[i] = t.Method + " " + t.URL
		}
	}
	return out
}

// Run drives the load until it is done or ctx ends, then summarises it. An
// error means the load could not start, or, with a valid summary, that the
// records could not be written.
func (e *Engine) Run(ctx context.Context, opts Options) (metrics.Summary, error) {
	base, err := e.zero(ctx)
	if err != nil {
		return metrics.Summary{}, err
	}
	e.base = base
	e.baseUnix = e.base.UnixNano()
	l, err := e.newLoop()
	if err != nil {
		return metrics.Summary{}, err
	}
	// measured carries the generator's CPU at the start of the measured
	// load, once the caller has seen it start.
	measured := make(chan time.Duration, 1)
	var beganAt atomic.Int64
	begin := func() {
		beganAt.Store(time.Now().UnixNano())
		cpu := cpuTime()
		if opts.Measuring != nil {
			opts.Measuring()
		}
		measured <- cpu
	}
	var leadEnd *time.Timer
	if e.cfg.Lead == 0 {
		begin()
	} else {
		after := e.afterFunc
		if after == nil {
			after = time.AfterFunc
		}
		leadEnd = after(time.Until(e.base.Add(e.cfg.Lead)), begin)
	}
	e.batches = make(chan []metrics.Record, 4096)
	e.free = make(chan []metrics.Record, 4096)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	collected := make(chan error, 1)
	go func() { collected <- e.collect(opts.Sink, cancel) }()
	stopProgress := e.progress(opts)

	hard := ctx
	if e.cfg.Pacer != nil {
		var cancelHard context.CancelFunc
		hard, cancelHard = e.sendWindow(ctx)
		defer cancelHard()
	}
	unsent, window := l.run(hard)
	l.close()
	close(e.batches)
	sinkErr := <-collected
	stopProgress()
	end := time.Now()
	// Cut short during the lead, nothing was measured. A load that
	// claimed a measured request is past its lead even where the timer
	// has not fired yet (a busy machine's runs late, and a slice of a few
	// requests can end within the delay): the measured load's start waits
	// for it instead.
	if leadEnd != nil && e.seq.Load() == 0 && leadEnd.Stop() {
		s := e.summarise(e.base.Add(e.cfg.Lead), e.base.Add(e.cfg.Lead), 0, unsent, window)
		s.Valid = false
		s.Warnings = append(s.Warnings, fmt.Sprintf("the load ended %v into its lead of %v: nothing was measured", end.Sub(e.base).Round(time.Millisecond), e.cfg.Lead))
		return s, sinkErr
	}
	cpu0 := <-measured
	s := e.summarise(e.base.Add(e.cfg.Lead), end, cpuTime()-cpu0, unsent, window)
	if late := beganAt.Load() - end.UnixNano(); late > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the lead's end was seen %v after the load's (the machine was busy): the CPU read for the measured load undercounts it", time.Duration(late).Round(time.Millisecond)))
	}
	if want := e.counted(); ctx.Err() == nil && s.Requests < want {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d of the %d requests asked for were sent: the time bound of %v ended the load first", s.Requests, want, e.cfg.Duration))
	}
	return s, sinkErr
}

// counted is how many requests a closed load's counts ask for when a time
// bound may end it first, 0 otherwise.
func (e *Engine) counted() int64 {
	if e.cfg.Pacer != nil || e.cfg.Duration == 0 {
		return 0
	}
	n := e.cfg.MaxRequests
	if e.cfg.Iterations > 0 {
		perUser := int64(e.cfg.Users) * int64(e.cfg.Iterations)
		if n == 0 || perUser < n {
			n = perUser
		}
	}
	return n
}

// collect is the one goroutine that aggregates and writes records, so the
// request path only appends to its own batch.
func (e *Engine) collect(sink Sink, cancel context.CancelCauseFunc) error {
	var sinkErr error
	for b := range e.batches {
		e.agg.Add(b)
		if sink != nil && sinkErr == nil {
			if sinkErr = sink.Write(b); sinkErr != nil {
				// Measuring on without a record of each request would break
				// the promise that every request is recorded.
				cancel(sinkErr)
			}
		}
		select {
		case e.free <- b[:0]:
		default:
		}
	}
	return sinkErr
}

func (e *Engine) progress(opts Options) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		var last int64
		lastAt := time.Duration(0)
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			p := e.agg.Progress()
			el := time.Since(e.base)
			rate := float64(p.Requests-last) / (el - lastAt).Seconds()
			last, lastAt = p.Requests, el
			opts.Progress(Snapshot{Elapsed: el, Requests: p.Requests, InFlight: e.inFlight.Load(), Errors: p.Errors, RateRPS: rate, P99Ms: p.P99Ms})
		}
	}()
	return func() { close(done); <-finished }
}

// closedUsers is how many users the closed model starts: no more than
// requests it may send, since a user beyond them could never send one and
// would only hold memory (a million users for ten requests took 2.3 GB).
func (e *Engine) closedUsers() int {
	if e.cfg.MaxRequests > 0 {
		return int(min(int64(e.cfg.Users), e.cfg.MaxRequests))
	}
	return e.cfg.Users
}

// sendWindow bounds when arrivals may still leave: the schedule's length
// and a tenth more (at least 50 ms, at most the request timeout), so that
// the duration bounds the run in wall time whatever the rate or the server,
// while a generator briefly starved of CPU on a busy machine still sends
// its last arrivals late rather than not at all. An arrival still waiting
// for a connection then is unsent.
func (e *Engine) sendWindow(ctx context.Context) (context.Context, context.CancelFunc) {
	d := e.cfg.Pacer.Duration()
	slack := min(max(d/10, 50*time.Millisecond), e.cfg.Timeout)
	return context.WithDeadline(ctx, e.base.Add(d+slack))
}

// claim takes the next sequence number within MaxRequests.
func (e *Engine) claim() (uint64, bool) {
	n := e.seq.Add(1)
	if e.cfg.MaxRequests > 0 && n > e.cfg.MaxRequests {
		return 0, false
	}
	return uint64(n - 1), true
}

// summarise describes the measured load, from start (the base, or the
// end of the lead) to end.
func (e *Engine) summarise(start, end time.Time, cpu time.Duration, unsent int64, window time.Duration) metrics.Summary {
	s := metrics.Summary{
		StartedAt:   start,
		EndedAt:     end,
		DurationS:   end.Sub(start).Seconds(),
		Connections: e.cfg.Connections,
	}
	e.agg.CountMalformed(e.badTimes.Load(), e.dropped.Load())
	e.agg.Fill(&s, s.DurationS)
	s.Valid = true
	s.AchievedRateOK = true
	s.Clock, s.Unstamped = metrics.KernelReceiveStamp, e.unstamped.Load()
	if e.cfg.Pacer != nil {
		s.Model = "open"
		sched := e.cfg.Pacer.Duration().Seconds()
		s.TargetRPS = e.cfg.Pacer.Expected() / sched
		s.Scheduled = s.Requests + unsent
		s.Unsent = unsent
		s.AchievedRPS = float64(s.Requests) / max(sched, window.Seconds())
		if s.Unsent > 0 || s.AchievedRPS < 0.95*s.TargetRPS {
			s.AchievedRateOK = false
			s.Valid = false
			s.Warnings = append(s.Warnings, fmt.Sprintf("achieved %.1f req/s of %.1f asked (%d never sent): the result is invalid", s.AchievedRPS, s.TargetRPS, s.Unsent))
		}
		if late := s.LateStarts; late > s.Requests/100 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%d requests (%.1f%%) left more than 1 ms after their slot: connections were busy or the generator lagged", late, 100*float64(late)/float64(max(s.Requests, 1))))
		}
	} else {
		s.Model = "closed"
		s.Users = e.cfg.Users
		s.AchievedRPS = s.ThroughputRPS
	}
	s.SuccessRateOK = s.SuccessRate >= e.cfg.MinSuccess
	if !s.SuccessRateOK {
		s.Valid = false
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d of %d requests succeeded (%.2f%%), under the minimum of %.2f%%: the result is invalid",
			s.Successes, s.Requests, 100*s.SuccessRate, 100*e.cfg.MinSuccess))
	}
	s.GeneratorCPUS = cpu.Seconds()
	// The cores msbench runs on now: fewer than the machine's when it was
	// placed (msbench load --cpus, or a study's placement). One loop sends
	// every request, so one core is what it can use, however many it has.
	s.GeneratorCPUs = placement.Current().String()
	if s.DurationS > 0 {
		s.GeneratorCPUUtil = s.GeneratorCPUS / s.DurationS
	}
	if s.GeneratorCPUUtil > 0.9 {
		w := fmt.Sprintf("the generator used %.0f%% of the one core its loop runs on: it may be the bottleneck, not the server", 100*s.GeneratorCPUUtil)
		if e.cfg.Pacer != nil && e.cfg.Pacing == Precise {
			w += "; coarse pacing costs a fraction of the CPU per request at high rates"
		}
		s.Warnings = append(s.Warnings, w)
	}
	if s.ServerTimingDropped > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d Server-Timing metrics dropped (more than %d per response or too many names)", s.ServerTimingDropped, metrics.MaxTimings))
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	return s
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// draw picks one think time.
func (t Think) draw(r *rand.Rand) time.Duration {
	if t.Max <= t.Min {
		return t.Min
	}
	return t.Min + time.Duration(r.Int64N(int64(t.Max-t.Min)+1))
}
