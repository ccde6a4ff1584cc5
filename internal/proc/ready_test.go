package proc_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestWaitReady(t *testing.T) {
	var ports proc.PortAllocator
	tests := []struct {
		name     string
		mode     string
		args     func(port int) []string
		check    func(port int) proc.Check
		timeout  time.Duration
		wantErr  error
		contains []string // in the error
		minTime  time.Duration
		maxTime  time.Duration
	}{
		{
			name:    "http server comes up after a delay",
			mode:    "http",
			args:    func(port int) []string { return []string{strconv.Itoa(port), "300ms", "204"} },
			check:   func(port int) proc.Check { return proc.HTTPCheck{URL: fmt.Sprintf("http://127.0.0.1:%d/", port)} },
			timeout: 10 * time.Second,
			minTime: 300 * time.Millisecond,
			maxTime: 2 * time.Second,
		},
		{
			name:    "tcp server comes up after a delay",
			mode:    "http",
			args:    func(port int) []string { return []string{strconv.Itoa(port), "200ms", "200"} },
			check:   func(port int) proc.Check { return proc.TCPCheck{Addr: fmt.Sprintf("127.0.0.1:%d", port)} },
			timeout: 10 * time.Second,
			minTime: 200 * time.Millisecond,
			maxTime: 2 * time.Second,
		},
		{
			name:     "process exits before ready",
			mode:     "fail",
			args:     func(int) []string { return nil },
			check:    func(port int) proc.Check { return proc.TCPCheck{Addr: fmt.Sprintf("127.0.0.1:%d", port)} },
			timeout:  10 * time.Second,
			wantErr:  proc.ErrExited,
			contains: []string{"boom: config file missing", "exit status 3", "tcp 127.0.0.1:"},
			maxTime:  2 * time.Second,
		},
		{
			name:     "times out naming the check",
			mode:     "sleep",
			args:     func(int) []string { return nil },
			check:    func(port int) proc.Check { return proc.TCPCheck{Addr: fmt.Sprintf("127.0.0.1:%d", port)} },
			timeout:  300 * time.Millisecond,
			wantErr:  proc.ErrNotReady,
			contains: []string{"not ready after 300ms", "tcp 127.0.0.1:", "connection refused"},
			minTime:  300 * time.Millisecond,
			maxTime:  time.Second,
		},
		{
			name:     "wrong status is not ready",
			mode:     "http",
			args:     func(port int) []string { return []string{strconv.Itoa(port), "0s", "503"} },
			check:    func(port int) proc.Check { return proc.HTTPCheck{URL: fmt.Sprintf("http://127.0.0.1:%d/health", port)} },
			timeout:  400 * time.Millisecond,
			wantErr:  proc.ErrNotReady,
			contains: []string{"status 503", "/health"},
			maxTime:  time.Second,
		},
		{
			name: "explicit status",
			mode: "http",
			args: func(port int) []string { return []string{strconv.Itoa(port), "0s", "418"} },
			check: func(port int) proc.Check {
				return proc.HTTPCheck{URL: fmt.Sprintf("http://127.0.0.1:%d/", port), WantStatus: 418}
			},
			timeout: 10 * time.Second,
			maxTime: 2 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port, err := ports.Next()
			if err != nil {
				t.Fatal(err)
			}
			p := proctest.Start(t, proctest.Spec(t, "svc", tt.mode, tt.args(port)...))
			start := time.Now()
			err = proc.WaitReady(context.Background(), p, tt.check(port), tt.timeout)
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if took < tt.minTime || took > tt.maxTime {
				t.Errorf("took %v, want between %v and %v", took, tt.minTime, tt.maxTime)
			}
		})
	}
}

func TestWaitReadyCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	never := proc.FuncCheck(func(context.Context) error { return errors.New("never") })
	err := proc.WaitReady(ctx, nil, never, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, proc.ErrNotReady) {
		t.Fatalf("err = %v, want the context's error", err)
	}
}

func TestWaitReadyBacksOff(t *testing.T) {
	calls := 0
	check := proc.FuncCheck(func(context.Context) error { calls++; return errors.New("no") })
	_ = proc.WaitReady(context.Background(), nil, check, time.Second)
	// 10+20+40+80+160 ms, then every 250 ms: about 8 calls in a second.
	// A fixed 10 ms poll would make ~100.
	if calls < 5 || calls > 12 {
		t.Errorf("%d checks in 1s, want a 10ms..250ms backoff (5..12)", calls)
	}
}
