package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm wakes a goroutine at an exact monotonic instant. Go's own timers
// wake through epoll_wait, whose timeout has millisecond resolution, so an
// idle generator would send up to a millisecond late and that lag would be
// counted as server latency. A timerfd fires through the same netpoller with
// the kernel's high-resolution timers, without spinning a core.
type alarm struct {
	f    *os.File
	mono int64 // CLOCK_MONOTONIC reading at base, ns
	base time.Time
	buf  [8]byte
}

func newAlarm(base time.Time) (*alarm, error) {
	mono, err := monoAt(base)
	if err != nil {
		return nil, err
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	return &alarm{f: os.NewFile(uintptr(fd), "msbench-alarm"), mono: mono, base: base}, nil
}

// monoAt pairs the kernel's CLOCK_MONOTONIC with Go's: it returns the
// kernel's reading at base. Elapsed-since-base read just before the kernel
// reading makes the pairing err only towards waking late, and the tightest
// of a few tries bounds that error.
func monoAt(base time.Time) (int64, error) {
	var mono int64
	gap := int64(-1)
	for range 5 {
		var ts unix.Timespec
		before := int64(time.Since(base))
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return 0, fmt.Errorf("clock_gettime: %w", err)
		}
		if g := int64(time.Since(base)) - before; gap < 0 || g < gap {
			gap, mono = g, ts.Nano()-before
		}
	}
	return mono, nil
}

// sleepUntil blocks until offset (ns since base) or until ctx ends; it
// returns false when ctx ended first.
func (a *alarm) sleepUntil(ctx context.Context, offset int64) bool {
	// Loop until Go's own clock agrees the time has come: a request sent
	// early would make its latency look shorter than it was.
	for int64(time.Since(a.base)) < offset {
		at := unix.NsecToTimespec(a.mono + offset)
		spec := unix.ItimerSpec{Value: at}
		if err := unix.TimerfdSettime(int(a.f.Fd()), unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			return a.fallback(ctx, offset)
		}
		if _, err := a.f.Read(a.buf[:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false
			}
			return a.fallback(ctx, offset)
		}
	}
	return ctx.Err() == nil
}

// fallback is a millisecond-grained sleep, used only if the timerfd
// misbehaves.
func (a *alarm) fallback(ctx context.Context, offset int64) bool {
	return sleepOnGoTimer(ctx, a.base, offset)
}

// interrupt makes a blocked sleepUntil return; used on cancellation.
func (a *alarm) interrupt() { _ = a.f.SetReadDeadline(time.Unix(1, 0)) }

func (a *alarm) close() error { return a.f.Close() }
