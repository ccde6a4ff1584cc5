package fanout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
)

// MaxWait bounds how far ahead a generator's start may lie: a generator
// told to wait longer was given a wrong clock or unit, and would hold its
// pod for nothing.
const MaxWait = 10 * time.Minute

// MaxLate is how long after the start a generator may still begin. One
// that begins later would send its overdue arrivals in a burst the
// schedule never asked for (in the open model), so it refuses and the
// step fails, rather than measure another load.
const MaxLate = time.Second

// Generate runs the spec's share of its load and writes the share's step
// output into out, as msbench load --out writes it (records.parquet and
// summary.json, with its HDR histograms), and the spec beside them
// (generator.json), which Merge reads. It is bounded in time: it waits at
// most MaxWait for the start, and the engine bounds the load (the
// schedule's length, or the closed model's time bound, plus the
// timeout). progress, when set, sees the load as it runs.
func Generate(ctx context.Context, spec Spec, out results.StepDir, progress func(load.Snapshot)) (metrics.Summary, error) {
	now := time.Now()
	switch {
	case spec.Start.IsZero() && spec.Share.Of > 1:
		return metrics.Summary{}, errors.New("the generator spec gives no start instant, which the shares of several generators must agree on")
	case spec.Start.IsZero():
		// A load sent whole has nothing to agree on: it starts now.
		spec.Start = now
	case spec.Start.Sub(now) > MaxWait:
		return metrics.Summary{}, fmt.Errorf("the start %s is %v away, more than the %v a generator waits", spec.Start.Format(time.RFC3339Nano), spec.Start.Sub(now).Round(time.Second), MaxWait)
	case now.Sub(spec.Start) > MaxLate:
		return metrics.Summary{}, fmt.Errorf("%s began %v after the agreed start %s (at most %v): its share would not be the schedule's", spec.Share, now.Sub(spec.Start).Round(time.Millisecond), spec.Start.Format(time.RFC3339Nano), MaxLate)
	}
	cfg, err := spec.config()
	if err != nil {
		return metrics.Summary{}, err
	}
	e, err := load.New(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	w, err := out.CreateRecords(e.Names(), e.TargetNames())
	if err != nil {
		return metrics.Summary{}, err
	}
	s, err := e.Run(ctx, load.Options{Sink: w, Progress: progress})
	if s.StartedAt.IsZero() {
		// Never started (interrupted while waiting for the start): no
		// step to write.
		w.Abort()
		return s, err
	}
	err = errors.Join(err, w.Close())
	if err == nil {
		err = writeSpec(out, spec)
	}
	if err == nil {
		// Last, as a step's summary marks it measured.
		err = out.WriteSummary(s)
	}
	return s, err
}
