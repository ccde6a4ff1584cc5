// Package pacer computes the intended start times of an open-model load: a
// rate that may ramp linearly between stages, with evenly spaced or Poisson
// arrivals. Intended times are what latency is measured from, so a slow
// server cannot slow the schedule down (no coordinated omission).
package pacer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Stage ramps the rate linearly from the previous stage's target (or the
// pacer's start rate) to Target requests per second over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Arrivals chooses how arrivals are spread inside the rate curve.
type Arrivals int

const (
	// Uniform spaces arrivals evenly: the k-th arrival is due when the
	// integral of the rate reaches k.
	Uniform Arrivals = iota
	// Poisson draws exponential gaps, as independent users arriving would.
	Poisson
)

// ParseArrivals reads "uniform" or "poisson".
func ParseArrivals(s string) (Arrivals, error) {
	switch s {
	case "uniform":
		return Uniform, nil
	case "poisson":
		return Poisson, nil
	}
	return 0, fmt.Errorf("arrivals %q: want uniform or poisson", s)
}

func (a Arrivals) String() string {
	if a == Poisson {
		return "poisson"
	}
	return "uniform"
}

// MarshalText and UnmarshalText keep the words in files such as a run's
// resolved study.
func (a Arrivals) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

func (a *Arrivals) UnmarshalText(b []byte) (err error) {
	*a, err = ParseArrivals(string(b))
	return err
}

// Pacer yields intended arrival offsets from the start of the load, in order.
// It is not safe for concurrent use; one dispatcher owns it.
type Pacer struct {
	arrivals Arrivals
	rng      *rand.Rand
	segs     []segment
	work     float64 // integral of the rate that the next arrival is due at
}

// segment is one linear piece of the rate curve with its cumulative count.
type segment struct {
	start    float64 // seconds from the beginning
	length   float64 // seconds
	from, to float64 // rate at start and end, per second
	before   float64 // arrivals due before this segment starts
}

// New builds a pacer that starts at startRate and then follows stages. The
// seed makes Poisson schedules reproducible.
func New(startRate float64, stages []Stage, arrivals Arrivals, seed uint64) (*Pacer, error) {
	if len(stages) == 0 {
		return nil, errors.New("pacer: no stages")
	}
	if startRate < 0 || math.IsNaN(startRate) || math.IsInf(startRate, 0) {
		return nil, fmt.Errorf("pacer: start rate %v must be a finite number ≥ 0", startRate)
	}
	p := &Pacer{arrivals: arrivals, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	from, at, count := startRate, 0.0, 0.0
	for i, s := range stages {
		if s.Duration <= 0 {
			return nil, fmt.Errorf("pacer: stage %d: duration must be positive", i+1)
		}
		if s.Target < 0 || math.IsNaN(s.Target) || math.IsInf(s.Target, 0) {
			return nil, fmt.Errorf("pacer: stage %d: target rate %v must be a finite number ≥ 0", i+1, s.Target)
		}
		length := s.Duration.Seconds()
		p.segs = append(p.segs, segment{start: at, length: length, from: from, to: s.Target, before: count})
		count += (from + s.Target) / 2 * length
		at += length
		from = s.Target
	}
	if count < 1 {
		return nil, errors.New("pacer: the stages schedule no request (rate × duration < 1)")
	}
	if arrivals == Poisson {
		p.work = p.rng.ExpFloat64()
	}
	return p, nil
}

// Constant is a pacer for a fixed rate over a duration.
func Constant(rate float64, d time.Duration, arrivals Arrivals, seed uint64) (*Pacer, error) {
	return New(rate, []Stage{{Duration: d, Target: rate}}, arrivals, seed)
}

// Duration is the length of the whole schedule.
func (p *Pacer) Duration() time.Duration {
	last := p.segs[len(p.segs)-1]
	return seconds(last.start + last.length)
}

// Expected is the number of arrivals the rate curve calls for.
func (p *Pacer) Expected() float64 {
	last := p.segs[len(p.segs)-1]
	return last.before + (last.from+last.to)/2*last.length
}

// Remaining is how many arrivals Next has still to yield, in O(1) however
// long the schedule: a run cut short counts them as unsent without walking
// them. Exact for uniform arrivals; for Poisson ones the count is random,
// and this is its expectation (the arrival already drawn plus the mean of
// the rest), rounded.
func (p *Pacer) Remaining() int64 {
	left := p.Expected() - p.work
	if left <= 0 {
		return 0
	}
	if p.arrivals == Poisson {
		return int64(math.Round(left)) + 1
	}
	// Uniform: the whole numbers k with work ≤ k < Expected.
	return int64(math.Ceil(left))
}

// Next returns the offset of the next arrival, or false when the schedule
// has ended.
func (p *Pacer) Next() (time.Duration, bool) {
	t, ok := p.at(p.work)
	if !ok {
		return 0, false
	}
	if p.arrivals == Poisson {
		p.work += p.rng.ExpFloat64()
	} else {
		p.work++
	}
	return seconds(t), true
}

// at inverts the cumulative count: the time at which the integral of the
// rate reaches work.
func (p *Pacer) at(work float64) (float64, bool) {
	for _, s := range p.segs {
		inSeg := (s.from + s.to) / 2 * s.length
		if work >= s.before+inSeg {
			continue
		}
		x := work - s.before
		if x <= 0 {
			return s.start, true
		}
		// Solve from·τ + slope/2·τ² = x for τ; this form avoids the
		// cancellation of the textbook quadratic formula when slope ≈ 0.
		slope := (s.to - s.from) / s.length
		tau := 2 * x / (s.from + math.Sqrt(s.from*s.from+2*slope*x))
		return s.start + tau, true
	}
	return 0, false
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
