// Package fanout spreads one step's load over several generators (pods on
// a cluster, processes on one machine) and merges what they measured into
// the one step a single generator would have written.
//
// Splitting. Every generator is given the whole load and its Share (index
// k of n) and resolves its part itself, so the one schedule is defined in
// one place. Open model: generator k sends arrivals k, k+n, k+2n, ... of
// the one schedule (same stages, same Poisson seed), so the union of the
// shares is that schedule exactly, arrival for arrival; a shared request
// count is split the same way (the first M arrivals of the schedule).
// Closed model: users, a shared request count and connections are split
// as evenly as possible, the first shares taking one more.
//
// Starting. Every generator waits for one agreed wall-clock instant and
// uses it as its time zero (load.Config.Start), so their intended send
// times are the one schedule's.
//
// Merging: see Merge.
package fanout

import (
	"fmt"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
)

// Share is one generator's part of a load spread over Of generators.
type Share struct {
	Index int `json:"index"` // from 0
	Of    int `json:"of"`
}

func (s Share) String() string { return fmt.Sprintf("generator %d of %d", s.Index+1, s.Of) }

func (s Share) check() error {
	if s.Of < 1 || s.Index < 0 || s.Index >= s.Of {
		return fmt.Errorf("share %d of %d: want an index from 0 to the number of generators less one", s.Index, s.Of)
	}
	return nil
}

// part is this share's count of n things dealt out in turn: both an even
// split (the first n mod Of shares take one more) and how many of the
// indices 0 … n-1 are Index modulo Of, which is the open model's split.
func (s Share) part(n int64) int64 {
	of := int64(s.Of)
	if int64(s.Index) < n%of {
		return n/of + 1
	}
	return n / of
}

// Config resolves the whole load's spec into the engine configuration of
// one share, with time zero at start (zero: when Run is called). A load
// with fewer users, connections or requests than generators is refused:
// a generator with none could not run, or, with no request count, would
// run unbounded by one.
func Config(spec loadspec.Spec, s Share, start time.Time) (load.Config, error) {
	if err := s.check(); err != nil {
		return load.Config{}, err
	}
	cfg, err := spec.Config()
	if err != nil {
		return load.Config{}, err
	}
	cfg.Start = start
	if cfg.Connections < s.Of {
		return load.Config{}, fmt.Errorf("%d connections cannot be spread over %d generators: each needs one", cfg.Connections, s.Of)
	}
	cfg.Connections = int(s.part(int64(cfg.Connections)))
	if cfg.MaxRequests > 0 {
		if cfg.MaxRequests < int64(s.Of) {
			return load.Config{}, fmt.Errorf("%d requests cannot be spread over %d generators: each needs one", cfg.MaxRequests, s.Of)
		}
		cfg.MaxRequests = s.part(cfg.MaxRequests)
	}
	if cfg.Pacer != nil {
		cfg.Pacer = &stride{whole: cfg.Pacer, of: int64(s.Of), skip: int64(s.Index)}
		return cfg, nil
	}
	if cfg.Users < s.Of {
		return load.Config{}, fmt.Errorf("%d users cannot be spread over %d generators: each needs one", cfg.Users, s.Of)
	}
	cfg.Users = int(s.part(int64(cfg.Users)))
	return cfg, nil
}

// stride is one share of the open model's schedule: every of-th arrival
// of the whole, from the share's index on. It draws every arrival of the
// whole, so a Poisson schedule's draws are the whole's whatever the share.
type stride struct {
	whole load.Schedule
	of    int64
	skip  int64 // arrivals of the whole before this share's next
}

func (s *stride) Next() (time.Duration, bool) {
	for ; s.skip > 0; s.skip-- {
		if _, ok := s.whole.Next(); !ok {
			return 0, false
		}
	}
	s.skip = s.of - 1
	return s.whole.Next()
}

func (s *stride) Duration() time.Duration { return s.whole.Duration() }

// Expected is the share's part of the whole's, so that the shares' target
// rates add up to the whole's.
func (s *stride) Expected() float64 { return s.whole.Expected() / float64(s.of) }

// Remaining counts the whole's remaining arrivals that fall to this share:
// the next after skip of them, then every of-th.
func (s *stride) Remaining() int64 {
	left := s.whole.Remaining() - s.skip
	if left <= 0 {
		return 0
	}
	return (left + s.of - 1) / s.of
}
