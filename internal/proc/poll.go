package proc

import (
	"context"
	"time"
)

// poll calls cond with exponential backoff from first up to limit until it
// returns true (nil) or ctx ends (ctx.Err()). A receive on wake retries at
// once, so an event we can observe directly is not delayed by the backoff.
func poll(ctx context.Context, first, limit time.Duration, wake <-chan struct{}, cond func() bool) error {
	delay := first
	for {
		if cond() {
			return nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
			wake = nil // a closed channel stays ready; honour it once
		case <-timer.C:
		}
		timer.Stop()
		delay = nextBackoff(delay, limit)
	}
}

func nextBackoff(d, limit time.Duration) time.Duration {
	d *= 2
	if d > limit {
		return limit
	}
	return d
}
