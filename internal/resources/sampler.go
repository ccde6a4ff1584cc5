package resources

import (
	"context"
	"sync"
	"time"
)

// DefaultSampleInterval is frequent enough to catch memory peaks where the
// kernel keeps none and to plot load steps of a few seconds, and rare
// enough that sampling costs the measured services almost nothing.
const DefaultSampleInterval = 150 * time.Millisecond

// Sample is one point of a service's time series.
type Sample struct {
	T        time.Duration // since the sampler's epoch
	CPUSec   float64       // cumulative user+system since Track
	MemBytes int64         // current memory
}

// Sampler polls the Usage of tracked services to build time series for
// plots. Polling also feeds the sampled peak of methods without a kernel
// peak, so keep one running during measurements.
type Sampler struct {
	interval time.Duration
	epoch    time.Time

	mu      sync.Mutex
	tracked []Tracked
	series  map[string][]Sample
	errs    map[string]error
}

// NewSampler returns a sampler whose epoch is now. interval <= 0 means
// DefaultSampleInterval.
func NewSampler(interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	return &Sampler{
		interval: interval,
		epoch:    time.Now(),
		series:   map[string][]Sample{},
		errs:     map[string]error{},
	}
}

// Epoch is the time that Sample.T counts from.
func (s *Sampler) Epoch() time.Time { return s.epoch }

// Add starts sampling t.
func (s *Sampler) Add(t Tracked) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracked = append(s.tracked, t)
}

// Remove stops sampling the service; its series is kept.
func (s *Sampler) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range s.tracked {
		if t.Name() == name {
			s.tracked = append(s.tracked[:i], s.tracked[i+1:]...)
			return
		}
	}
}

// Run samples every interval until ctx is done. Run it in its own
// goroutine.
func (s *Sampler) Run(ctx context.Context) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		s.SampleNow()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// SampleNow takes one sample of every service. A failed read is recorded
// (see Err) and leaves a gap rather than a fake zero in the series.
func (s *Sampler) SampleNow() {
	s.mu.Lock()
	tracked := append([]Tracked(nil), s.tracked...)
	s.mu.Unlock()
	for _, t := range tracked {
		u, err := t.Usage() // outside the lock: it reads files
		at := time.Since(s.epoch)
		s.mu.Lock()
		if err != nil {
			s.errs[t.Name()] = err
		} else {
			s.series[t.Name()] = append(s.series[t.Name()], Sample{T: at, CPUSec: u.CPUSec(), MemBytes: u.CurrentMemBytes})
		}
		s.mu.Unlock()
	}
}

// Series returns a copy of the samples of a service.
func (s *Sampler) Series(name string) []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.series[name]...)
}

// Err is the last sampling error of a service, if any.
func (s *Sampler) Err(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[name]
}
