package load

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
)

// firsts keeps the earliest intended time the records carry.
type firsts struct{ intended int64 }

func (f *firsts) Write(batch []metrics.Record) error {
	for _, r := range batch {
		if f.intended == 0 || r.Intended < f.intended {
			f.intended = r.Intended
		}
	}
	return nil
}

// TestStartIsTimeZero: a load given a start instant measures from that
// instant, to the nanosecond, in both models, as generators on several
// machines must to send one schedule.
func TestStartIsTimeZero(t *testing.T) {
	srv := okServer(t, nil)
	target := []Target{{URL: srv.URL}}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"open", Config{Targets: target, Connections: 2, Pacer: constant(t, 50, 200*time.Millisecond)}},
		{"closed", Config{Targets: target, Users: 2, Iterations: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Truncated as a start read from a file would be: no monotonic
			// reading, a wall-clock time to the ns.
			start := time.Now().Add(300 * time.Millisecond).Round(0)
			tt.cfg.Start = start
			var sink firsts
			s := run(t, tt.cfg, Options{Sink: &sink})
			if !s.StartedAt.Equal(start) {
				t.Errorf("started at %s, want the start %s", s.StartedAt.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
			}
			if sink.intended != start.UnixNano() {
				t.Errorf("first intended time %d ns after the start, want 0", sink.intended-start.UnixNano())
			}
			if !s.EndedAt.After(start) {
				t.Errorf("ended at %s, before the start %s", s.EndedAt, start)
			}
		})
	}
}

func TestStartWaitEndsWithContext(t *testing.T) {
	srv := okServer(t, nil)
	e, err := New(Config{Targets: []Target{{URL: srv.URL}}, Connections: 1, Timeout: time.Second, Users: 1, Iterations: 1, Start: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := e.Run(ctx, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run waiting for a start an hour away, cancelled: %v, want the context's error", err)
	}
	if waited := time.Since(began); waited > 30*time.Second {
		t.Errorf("Run returned %v after its context ended", waited)
	}
}
