package fanout

import (
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/pacer"
)

var nowhere = []load.Target{{URL: "http://127.0.0.1:9/"}}

// offsets drains a schedule.
func offsets(s load.Schedule) []time.Duration {
	var out []time.Duration
	for {
		off, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, off)
	}
}

// TestSharesUnionIsTheSchedule: the shares' arrivals, taken in turn, are
// the one schedule's, to the nanosecond, for even, staged and Poisson
// arrivals and any number of generators.
func TestSharesUnionIsTheSchedule(t *testing.T) {
	specs := map[string]loadspec.Spec{
		"even":    {Open: true, Rate: 1000, Duration: 2 * time.Second},
		"staged":  {Open: true, Rate: 10, Stages: []pacer.Stage{{Duration: time.Second, Target: 500}, {Duration: 500 * time.Millisecond, Target: 500}, {Duration: 700 * time.Millisecond, Target: 0}}},
		"poisson": {Open: true, Rate: 800, Duration: 2 * time.Second, Arrivals: pacer.Poisson, Seed: 7},
		"count":   {Open: true, Rate: 300, Requests: 1001},
	}
	for name, spec := range specs {
		spec.Targets = nowhere
		whole, err := spec.Config()
		if err != nil {
			t.Fatal(err)
		}
		want := offsets(whole.Pacer)
		if whole.MaxRequests > 0 {
			want = want[:whole.MaxRequests]
		}
		for _, n := range []int{1, 2, 3, 7} {
			shares := make([][]time.Duration, n)
			var sent int64
			for k := range n {
				cfg, err := Config(spec, Share{k, n}, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				shares[k] = offsets(cfg.Pacer)
				if cfg.MaxRequests > 0 {
					// The engine stops a share at its count.
					shares[k] = shares[k][:min(int64(len(shares[k])), cfg.MaxRequests)]
					sent += cfg.MaxRequests
				}
			}
			if whole.MaxRequests > 0 && sent != whole.MaxRequests {
				t.Errorf("%s over %d: the shares' counts add up to %d, want %d", name, n, sent, whole.MaxRequests)
			}
			var union []time.Duration
			for j := 0; ; j++ {
				s := shares[j%n]
				if j/n >= len(s) {
					break
				}
				union = append(union, s[j/n])
			}
			if len(union) != len(want) {
				t.Errorf("%s over %d: %d arrivals in the union, %d in the schedule", name, n, len(union), len(want))
				continue
			}
			for j := range want {
				if union[j] != want[j] {
					t.Errorf("%s over %d: arrival %d at %v in the union, %v in the schedule", name, n, j, union[j], want[j])
					break
				}
			}
		}
	}
}

// TestShareCounts: what a share reports of its schedule adds up to the
// whole's, before and during the run, so that target rates and unsent
// arrivals add up when the shares are merged.
func TestShareCounts(t *testing.T) {
	spec := loadspec.Spec{Open: true, Rate: 100, Duration: time.Second, Targets: nowhere}
	whole, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7} {
		for _, taken := range []int{0, 1, 5, 14, 50} {
			var remaining int64
			var expected float64
			for k := range n {
				cfg, err := Config(spec, Share{k, n}, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				// Share k has taken its part of the whole's first taken arrivals.
				for range (Share{k, n}).part(int64(taken)) {
					cfg.Pacer.Next()
				}
				remaining += cfg.Pacer.Remaining()
				expected += cfg.Pacer.Expected()
				if cfg.Pacer.Duration() != whole.Pacer.Duration() {
					t.Errorf("share %d of %d lasts %v, the schedule %v", k, n, cfg.Pacer.Duration(), whole.Pacer.Duration())
				}
			}
			if want := whole.Pacer.Remaining() - int64(taken); remaining != want {
				t.Errorf("%d shares after %d arrivals: %d remaining in all, want %d", n, taken, remaining, want)
			}
			if expected < whole.Pacer.Expected()-1e-9 || expected > whole.Pacer.Expected()+1e-9 {
				t.Errorf("%d shares: %v expected in all, want %v", n, expected, whole.Pacer.Expected())
			}
		}
	}
}

func TestClosedSplit(t *testing.T) {
	tests := []struct {
		name string
		spec loadspec.Spec
		n    int
		// per share
		users, conns []int
		requests     []int64
		err          string
	}{
		{name: "users and their connections", spec: loadspec.Spec{Users: 10, Iterations: 3}, n: 3, users: []int{4, 3, 3}, conns: []int{4, 3, 3}, requests: []int64{0, 0, 0}},
		{name: "a shared count", spec: loadspec.Spec{Users: 5, Requests: 101, Connections: 4}, n: 2, users: []int{3, 2}, conns: []int{2, 2}, requests: []int64{51, 50}},
		{name: "one generator", spec: loadspec.Spec{Users: 2, Duration: time.Second}, n: 1, users: []int{2}, conns: []int{2}, requests: []int64{0}},
		{name: "fewer users than generators", spec: loadspec.Spec{Users: 2, Connections: 4, Iterations: 1}, n: 3, err: "2 users cannot be spread over 3"},
		{name: "fewer connections than generators", spec: loadspec.Spec{Users: 6, Connections: 2, Iterations: 1}, n: 3, err: "2 connections"},
		{name: "fewer requests than generators", spec: loadspec.Spec{Users: 6, Requests: 2}, n: 3, err: "2 requests"},
		{name: "open, fewer requests than generators", spec: loadspec.Spec{Open: true, Rate: 10, Requests: 2}, n: 3, err: "2 requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Targets = nowhere
			for k := range tt.n {
				cfg, err := Config(tt.spec, Share{k, tt.n}, time.Time{})
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("share %d: error %v, want one saying %q", k, err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Users != tt.users[k] || cfg.Connections != tt.conns[k] || cfg.MaxRequests != tt.requests[k] {
					t.Errorf("share %d: %d users, %d connections, %d requests; want %d, %d, %d", k, cfg.Users, cfg.Connections, cfg.MaxRequests, tt.users[k], tt.conns[k], tt.requests[k])
				}
			}
			if tt.err != "" {
				t.Fatalf("no error, want one saying %q", tt.err)
			}
		})
	}
}

func TestBadShare(t *testing.T) {
	for _, s := range []Share{{0, 0}, {-1, 2}, {2, 2}} {
		if _, err := Config(loadspec.Spec{Users: 4, Iterations: 1, Targets: nowhere}, s, time.Time{}); err == nil {
			t.Errorf("share %d of %d accepted", s.Index, s.Of)
		}
	}
}
