// Package claimstest checks an analysis' verdicts on synthetic data whose
// answers are known.
package claimstest

import (
	"math"
	"testing"

	"github.com/msbench/msbench/internal/claims"
)

// Verdicts judges every claim of file on metrics with the noise model and
// wants each one's verdict in want, none provisional, and a verdict named
// for every claim. With reps > 0 every metric (every part of a
// conjunction) must have one value per repetition.
func Verdicts(t *testing.T, file *claims.File, metrics map[string]claims.Metric, noise claims.Noise, reps int, want map[string]string) {
	t.Helper()
	if len(file.Claims) != len(want) {
		t.Errorf("the claims file has %d claims, the test expects %d", len(file.Claims), len(want))
	}
	for _, c := range file.Claims {
		r := claims.Judge(c, metrics, noise)
		if r.Verdict != want[c.ID] || r.Provisional {
			t.Errorf("claim %s: verdict %q provisional %v (%s; %s), want %q", c.ID, r.Verdict, r.Provisional, r.Measured(), r.Why, want[c.ID])
		}
	}
	if reps == 0 {
		return
	}
	for id, m := range metrics {
		parts := m.All
		if parts == nil {
			parts = []claims.Part{{PerRun: m.PerRun}}
		}
		for _, p := range parts {
			if len(p.PerRun) != reps {
				t.Errorf("metric %s %s has %d values, want one per repetition (%d)", id, p.Label, len(p.PerRun), reps)
			}
		}
	}
}

// Parts wants m to be a conjunction whose parts are exactly want: label →
// one value per repetition, equal within 1e-9.
func Parts(t *testing.T, m claims.Metric, want map[string][]float64) {
	t.Helper()
	if m.PerRun != nil || len(m.All) != len(want) {
		t.Fatalf("%+v, want the parts %v", m, want)
	}
	for _, p := range m.All {
		w, ok := want[p.Label]
		if !ok || len(p.PerRun) != len(w) {
			t.Fatalf("part %s %v, want %v", p.Label, p.PerRun, want)
		}
		for i := range w {
			if math.Abs(p.PerRun[i]-w[i]) > 1e-9 {
				t.Errorf("part %s repetition %d: %v, want %v", p.Label, i+1, p.PerRun[i], w[i])
			}
		}
	}
}
