package pacer

import (
	"math"
	"testing"
	"time"
)

func drain(t *testing.T, p *Pacer) []time.Duration {
	t.Helper()
	var out []time.Duration
	for {
		d, ok := p.Next()
		if !ok {
			return out
		}
		if n := len(out); n > 0 && d < out[n-1] {
			t.Fatalf("arrival %d at %v goes back in time from %v", n, d, out[n-1])
		}
		out = append(out, d)
		if len(out) > 10_000_000 {
			t.Fatal("schedule does not end")
		}
	}
}

func TestConstantSpacing(t *testing.T) {
	p, err := Constant(100, time.Second, Uniform, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, p)
	if len(got) != 100 {
		t.Fatalf("got %d arrivals, want 100", len(got))
	}
	for i, d := range got {
		want := time.Duration(i) * 10 * time.Millisecond
		if diff := d - want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Fatalf("arrival %d at %v, want %v", i, d, want)
		}
	}
}

func TestFractionalRate(t *testing.T) {
	p, err := Constant(0.5, 10*time.Second, Uniform, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, p)
	if len(got) != 5 || got[1] != 2*time.Second {
		t.Fatalf("got %v, want 5 arrivals 2 s apart", got)
	}
}

func TestRampCounts(t *testing.T) {
	tests := []struct {
		name      string
		start     float64
		stages    []Stage
		want      int
		firstHalf int // arrivals in the first half of the schedule
	}{
		{"up from zero", 0, []Stage{{10 * time.Second, 100}}, 500, 125},
		{"down to zero", 100, []Stage{{10 * time.Second, 0}}, 500, 375},
		{"up, hold, down", 0, []Stage{{2 * time.Second, 100}, {6 * time.Second, 100}, {2 * time.Second, 0}}, 800, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.start, tt.stages, Uniform, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := drain(t, p)
			if diff := len(got) - tt.want; diff < -1 || diff > 1 {
				t.Fatalf("got %d arrivals, want %d±1", len(got), tt.want)
			}
			half := p.Duration() / 2
			n := 0
			for _, d := range got {
				if d < half {
					n++
				}
			}
			if diff := n - tt.firstHalf; diff < -1 || diff > 1 {
				t.Fatalf("first half has %d arrivals, want %d±1", n, tt.firstHalf)
			}
		})
	}
}

func TestPoissonMeanAndSpread(t *testing.T) {
	p, err := Constant(1000, 20*time.Second, Poisson, 42)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, p)
	if math.Abs(float64(len(got))-20000) > 4*math.Sqrt(20000) {
		t.Fatalf("got %d arrivals, want about 20000", len(got))
	}
	// Exponential gaps have a coefficient of variation of 1; even spacing 0.
	var sum, sq float64
	for i := 1; i < len(got); i++ {
		g := (got[i] - got[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(got) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	if cv < 0.9 || cv > 1.1 {
		t.Fatalf("gap coefficient of variation %.3f, want about 1", cv)
	}
	again, _ := Constant(1000, 20*time.Second, Poisson, 42)
	if d, _ := again.Next(); d != got[0] {
		t.Fatalf("same seed gave first arrival %v then %v", got[0], d)
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		name   string
		start  float64
		stages []Stage
	}{
		{"no stages", 1, nil},
		{"negative start", -1, []Stage{{time.Second, 1}}},
		{"zero duration", 1, []Stage{{0, 1}}},
		{"NaN target", 1, []Stage{{time.Second, math.NaN()}}},
		{"nothing scheduled", 0, []Stage{{time.Second, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.start, tt.stages, Uniform, 1); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

// Remaining must match what Next still yields, at every point of the
// schedule, and answer at once for a schedule too long to walk.
func TestRemaining(t *testing.T) {
	tests := []struct {
		name   string
		start  float64
		stages []Stage
	}{
		{"constant", 100, []Stage{{time.Second, 100}}},
		{"fractional", 0.7, []Stage{{10 * time.Second, 0.7}}},
		{"ramp up and down", 0, []Stage{{time.Second, 300}, {2 * time.Second, 300}, {time.Second, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.start, tt.stages, Uniform, 1)
			if err != nil {
				t.Fatal(err)
			}
			total := int64(len(drain(t, mustNew(t, tt.start, tt.stages))))
			for taken := int64(0); ; taken++ {
				if got := p.Remaining(); got != total-taken {
					t.Fatalf("after %d of %d arrivals Remaining = %d, want %d", taken, total, got, total-taken)
				}
				if _, ok := p.Next(); !ok {
					break
				}
			}
		})
	}
	t.Run("poisson is the expectation", func(t *testing.T) {
		var sum float64
		const trials = 200
		for seed := range uint64(trials) {
			p := mustPoisson(t, seed)
			for range 500 {
				p.Next()
			}
			sum += float64(p.Remaining() - int64(len(drain(t, p))))
		}
		if bias := sum / trials; math.Abs(bias) > 5 { // about 3 standard errors
			t.Fatalf("Remaining is off by %.1f arrivals on average, want about 0", bias)
		}
	})
	t.Run("huge schedule", func(t *testing.T) {
		p, err := Constant(1e12, time.Second, Uniform, 1)
		if err != nil {
			t.Fatal(err)
		}
		p.Next()
		if got := p.Remaining(); got != 1e12-1 {
			t.Fatalf("Remaining = %d, want %d", got, int64(1e12-1))
		}
	})
}

func mustNew(t *testing.T, start float64, stages []Stage) *Pacer {
	t.Helper()
	p, err := New(start, stages, Uniform, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPoisson(t *testing.T, seed uint64) *Pacer {
	t.Helper()
	p, err := Constant(1000, time.Second, Poisson, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
