package load

import (
	"context"
	"fmt"
	"time"
)

// Schedule is the open model's arrivals as offsets from the load's time
// zero, in order: a *pacer.Pacer, or one generator's share of one when a
// load is spread over several generators (internal/fanout).
type Schedule interface {
	// Next is the next arrival's offset; false once the schedule ended.
	Next() (time.Duration, bool)
	// Duration is the length of the whole schedule.
	Duration() time.Duration
	// Expected is how many arrivals the schedule calls for.
	Expected() float64
	// Remaining is how many arrivals Next has still to yield.
	Remaining() int64
}

// zero is the load's time zero: now, or Config.Start once it has come.
// Config.Start carries no monotonic reading (it comes from a file), so
// time zero is now moved to it: the engine's clock stays monotonic while
// its wall-clock times are the agreed ones.
func (e *Engine) zero(ctx context.Context) (time.Time, error) {
	if e.cfg.Start.IsZero() {
		return time.Now(), nil
	}
	t := time.NewTimer(time.Until(e.cfg.Start))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("waiting for the load's start at %s: %w", e.cfg.Start.Format(time.RFC3339Nano), context.Cause(ctx))
	case <-t.C:
	}
	now := time.Now()
	return now.Add(e.cfg.Start.Sub(now)), nil
}
