// Package loadspec is the language people write a load in, on msbench
// load's command line and in a study file's steps: a Spec, its defaults and
// bounds, and the request bodies built from files and forms. Both front ends
// resolve a Spec into the load engine's Config, so they mean the same thing
// by the same words; the engine itself changes only when sending does.
package loadspec

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/pacer"
)

// Spec is a load as people write it, on a command line or in a study file;
// Config fills in the defaults and builds the arrival schedule, so both
// front ends mean the same thing by the same words.
type Spec struct {
	Open        bool // arrivals on a schedule rather than users in a loop
	Users       int  // closed model; default 10
	Think       load.Think
	Rate        float64 // open model: requests per second; with Stages, the starting rate
	Stages      []pacer.Stage
	Arrivals    pacer.Arrivals
	Pacing      load.Pacing
	Tick        time.Duration // coarse pacing; default load.DefaultTick
	Seed        uint64
	Connections int // default: one per user; 100 in the open model
	Duration    time.Duration
	Requests    int64
	Iterations  int
	Timeout     time.Duration // default 30 s
	Insecure    bool          // see load.Config.Insecure
	Targets     []load.Target
	TagHeader   string // see load.Config.TagHeader
	// MinSuccess is load.Config.MinSuccess; nil means DefaultMinSuccess.
	MinSuccess  *float64
	AllowRemote bool // see load.Config.AllowRemote
}

// DefaultMinSuccess marks a run invalid when under 1% of its requests
// succeeded: a refused port or a wrong URL, not a measurement.
const DefaultMinSuccess = 0.01

// MaxRate is beyond what any HTTP/1.1 generator sends from one machine;
// a larger rate is a typing mistake, refused before anything is sent.
const MaxRate = 1e7

// DefaultUsers is the closed model's users when a load names none.
const DefaultUsers = 10

// DefaultDuration bounds a load that names no other bound.
const DefaultDuration = 10 * time.Second

// CountBound bounds in time a closed load that names only a count, as
// k6's maxDuration does for its iteration executors: a server that answers
// slowly, or a long think time, must not keep the load going for days.
// An hour rather than k6's ten minutes: the faas-gateway paper's sleep step
// (100,000 requests of a second each over 150 users) takes eleven.
const CountBound = time.Hour

// MaxTimeout is the longest a request may wait for its answer: the run
// waits for every request in flight, so a longer one would unbound it.
const MaxTimeout = CountBound

// MaxUsers bounds the closed model's users: each has, by default, a
// connection of its own, with its socket and buffers (100,000 took about
// 1 GiB). More concurrency than that is the open model's.
const MaxUsers = 100_000

// Validate says what is wrong with the spec, in words that fit a command
// line and a study file alike; each front end adds where it was said.
func (s Spec) Validate() error {
	switch {
	case s.Open && s.Users > 0:
		return errors.New("users belong to the closed model, a rate or stages to the open one: choose one")
	case s.Open && s.Think != (load.Think{}):
		return errors.New("think time applies to the closed model only")
	case !s.Open && s.Pacing != load.Precise:
		return errors.New("pacing applies to the open model only")
	case s.Tick != 0 && (!s.Open || s.Pacing != load.Coarse):
		return errors.New("a tick applies to coarse pacing only")
	case s.Tick < 0:
		return errors.New("the tick must be positive")
	case s.Open && s.Iterations > 0:
		return errors.New("iterations apply to the closed model only")
	case s.Open && len(s.Stages) > 0 && s.Duration > 0:
		return errors.New("stages set the duration: give one or the other")
	case s.Rate < 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return errors.New("the rate must be a positive number")
	case s.Open && len(s.Stages) == 0 && s.Rate == 0:
		return errors.New("a rate of 0 sends nothing: give a positive rate")
	case s.Rate > MaxRate || slices.ContainsFunc(s.Stages, func(st pacer.Stage) bool { return st.Target > MaxRate }):
		return fmt.Errorf("a rate over %.0e requests per second is beyond what one machine can send", MaxRate)
	case s.Users < 0 || s.Connections < 0 || s.Requests < 0 || s.Iterations < 0 || s.Duration < 0 || s.Timeout < 0:
		return errors.New("users, connections, requests, iterations, duration and timeout cannot be negative")
	case !s.Open && (s.Rate > 0 || len(s.Stages) > 0):
		return errors.New("a rate or stages belong to the open model")
	case s.MinSuccess != nil && !(*s.MinSuccess >= 0 && *s.MinSuccess <= 1):
		return fmt.Errorf("the minimum success rate %v must lie between 0 and 1", *s.MinSuccess)
	case s.Users > MaxUsers:
		return fmt.Errorf("%d users: at most %d, each with a connection of its own by default, its socket and buffers (the open model drives more concurrency)", s.Users, MaxUsers)
	case s.Timeout > MaxTimeout:
		return fmt.Errorf("a timeout of %v: at most %v, since the load waits for every request in flight", s.Timeout, MaxTimeout)
	case !s.Open && s.Think.Max >= s.timeBound():
		return fmt.Errorf("think time up to %v reaches the load's time bound, %v: no user could send twice; give a longer duration (a load bounded only by a count stops after %v)", s.Think.Max, s.timeBound(), CountBound)
	}
	if s.Open {
		if _, err := s.pacer(); err != nil {
			return err
		}
	}
	return nil
}

// Config resolves the spec into what the engine runs.
func (s Spec) Config() (load.Config, error) {
	if err := s.Validate(); err != nil {
		return load.Config{}, err
	}
	cfg := load.Config{
		Targets:     s.Targets,
		Connections: s.Connections,
		Timeout:     s.Timeout,
		Insecure:    s.Insecure,
		Duration:    s.Duration,
		MaxRequests: s.Requests,
		Iterations:  s.Iterations,
		TagHeader:   s.TagHeader,
		MinSuccess:  DefaultMinSuccess,
		AllowRemote: s.AllowRemote,
	}
	if s.MinSuccess != nil {
		cfg.MinSuccess = *s.MinSuccess
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if s.Open {
		p, err := s.pacer()
		if err != nil {
			return load.Config{}, err
		}
		cfg.Pacer, cfg.Pacing = p, s.Pacing
		if cfg.Pacing == load.Coarse {
			cfg.Tick = cmp.Or(s.Tick, load.DefaultTick)
		}
		if cfg.Connections == 0 {
			cfg.Connections = 100
		}
		return cfg, nil
	}
	cfg.Users, cfg.Think = cmp.Or(s.Users, DefaultUsers), s.Think
	if cfg.Connections == 0 {
		cfg.Connections = cfg.Users
	}
	cfg.Duration = s.timeBound()
	return cfg, nil
}

// timeBound is when a closed load stops sending at the latest.
func (s Spec) timeBound() time.Duration {
	switch {
	case s.Duration > 0:
		return s.Duration
	case s.Requests > 0 || s.Iterations > 0:
		return CountBound
	}
	return DefaultDuration
}

func (s Spec) pacer() (*pacer.Pacer, error) {
	stages := s.Stages
	switch {
	case len(stages) > 0:
	case s.Duration > 0:
		stages = []pacer.Stage{{Duration: s.Duration, Target: s.Rate}}
	case s.Requests > 0 && s.Rate > 0:
		// A count at a rate is a schedule of count/rate seconds.
		d := time.Duration(math.Ceil(float64(s.Requests) / s.Rate * float64(time.Second)))
		stages = []pacer.Stage{{Duration: d, Target: s.Rate}}
	default:
		stages = []pacer.Stage{{Duration: DefaultDuration, Target: s.Rate}}
	}
	return pacer.New(s.Rate, stages, s.Arrivals, s.Seed)
}

// String describes the load in words, e.g. "open model, 50 req/s, 8
// connections, 1m0s" or "closed model, 10 users, think 1s–1s, 100
// iterations per user".
func (s Spec) String() string {
	var parts []string
	if s.Open {
		switch {
		case len(s.Stages) > 0:
			var st []string
			for _, sg := range s.Stages {
				st = append(st, fmt.Sprintf("%v to %g req/s", sg.Duration, sg.Target))
			}
			parts = append(parts, fmt.Sprintf("open model from %g req/s, %s", s.Rate, strings.Join(st, ", ")))
		default:
			parts = append(parts, fmt.Sprintf("open model, %g req/s", s.Rate))
		}
		if s.Arrivals == pacer.Poisson {
			parts = append(parts, "poisson arrivals")
		}
		if s.Connections > 0 {
			parts = append(parts, fmt.Sprintf("%d connections", s.Connections))
		}
	} else {
		parts = append(parts, fmt.Sprintf("closed model, %d users", cmp.Or(s.Users, 10)))
		if s.Think.Max > 0 {
			parts = append(parts, fmt.Sprintf("think %v–%v", s.Think.Min, s.Think.Max))
		}
	}
	if s.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", s.Requests))
	}
	if s.Duration > 0 {
		parts = append(parts, s.Duration.String())
	}
	if s.Iterations > 0 {
		parts = append(parts, fmt.Sprintf("%d iterations per user", s.Iterations))
	}
	return strings.Join(parts, ", ")
}

// ParseThink reads a think time as a fixed duration (1s) or a uniform
// range (500ms-1s); the command line and study files both use it.
func ParseThink(s string) (load.Think, error) {
	if strings.TrimSpace(s) == "" {
		return load.Think{}, nil
	}
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil || a < 0 {
		return load.Think{}, fmt.Errorf("think time %q: want a duration (1s) or a range (500ms-1s)", s)
	}
	if !isRange {
		return load.Think{Min: a, Max: a}, nil
	}
	b, err := time.ParseDuration(strings.TrimSpace(hi))
	if err != nil || b < a {
		return load.Think{}, fmt.Errorf("think time %q: want a range low-high, e.g. 500ms-1s", s)
	}
	return load.Think{Min: a, Max: b}, nil
}

// ParseStages reads ramps as DURATION:RATE,..., e.g. 30s:500,1m:500,10s:0;
// the command line and study files both use it.
func ParseStages(s string) ([]pacer.Stage, error) {
	var out []pacer.Stage
	for _, part := range strings.Split(s, ",") {
		d, r, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("stage %q: want DURATION:RATE, e.g. 30s:100", part)
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("stage %q: %q is not a positive duration", part, d)
		}
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil || rate < 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
			return nil, fmt.Errorf("stage %q: %q is not a rate ≥ 0", part, r)
		}
		out = append(out, pacer.Stage{Duration: dur, Target: rate})
	}
	return out, nil
}
