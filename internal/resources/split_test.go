package resources

import "testing"

func TestMonotonicSplit(t *testing.T) {
	// Totals that grow while the tick-sampled share of user time swings.
	reads := [][2]float64{{1, 0}, {1.2, 0.3}, {0.9, 1.0}, {2.5, 0}, {2.5, 0}, {2.0, 0.4}}
	var m monotonicSplit
	var prevUser, prevSys float64
	for i, r := range reads {
		user, sys := m.adjust(r[0], r[1])
		if user < prevUser || sys < prevSys {
			t.Fatalf("read %d %v: user %v sys %v went back from %v %v", i, r, user, sys, prevUser, prevSys)
		}
		if total := r[0] + r[1]; total > prevUser+prevSys && user+sys != total {
			t.Fatalf("read %d %v: user %v + sys %v is not the total %v", i, r, user, sys, total)
		}
		prevUser, prevSys = user, sys
	}
	// The system time once given (0.7 at the third read) stays given.
	if prevUser != 1.8 || prevSys != 0.7 {
		t.Errorf("ended at user %v sys %v, want 1.8 and 0.7", prevUser, prevSys)
	}
}
