package load

import (
	"context"
	"sort"
	"testing"
	"time"
)

// The alarm must never wake early: an early send would shorten the measured
// latency. How late it wakes is a performance figure, logged rather than
// asserted (see BenchmarkAlarm).
func TestAlarmWakesOnTime(t *testing.T) {
	base := time.Now()
	a, err := newAlarm(base)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	var late []time.Duration
	for i := 1; i <= 200; i++ {
		at := int64(time.Since(base)) + int64(200*time.Microsecond)
		if !a.sleepUntil(context.Background(), at) {
			t.Fatal("sleepUntil returned false without cancellation")
		}
		woke := int64(time.Since(base))
		if woke < at {
			t.Fatalf("woke %v early", time.Duration(at-woke))
		}
		late = append(late, time.Duration(woke-at))
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	t.Logf("wake-up lateness: median %v, p99 %v", late[len(late)/2], late[len(late)*99/100])
}

func TestAlarmInterrupt(t *testing.T) {
	base := time.Now()
	a, err := newAlarm(base)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
		a.interrupt()
	}()
	start := time.Now()
	if a.sleepUntil(ctx, int64(time.Hour)) {
		t.Fatal("sleepUntil returned true after cancellation")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("interrupt did not wake the sleeper")
	}
}
