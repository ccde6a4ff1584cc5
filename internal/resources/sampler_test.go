package resources

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestSampler(t *testing.T) {
	a := newTestAccountant(t, MethodProc)
	p := proctest.StartHelper(t, "burner", "burn")
	tr := track(t, a, p, Limits{})

	s := NewSampler(50 * time.Millisecond)
	s.Add(tr)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	time.Sleep(600 * time.Millisecond)
	cancel()
	wg.Wait() // Run must return on cancel

	series := s.Series("burner")
	if len(series) < 6 {
		t.Fatalf("%d samples in 600ms at 50ms", len(series))
	}
	for i := 1; i < len(series); i++ {
		if series[i].T <= series[i-1].T || series[i].CPUSec < series[i-1].CPUSec {
			t.Errorf("sample %d %+v does not follow %+v", i, series[i], series[i-1])
		}
	}
	if last := series[len(series)-1]; last.CPUSec < 0.2 || last.MemBytes <= 0 {
		t.Errorf("last sample %+v: want CPU and memory of a running burner", last)
	}
	if err := s.Err("burner"); err != nil {
		t.Errorf("sampling error: %v", err)
	}

	stopAndClose(t, p, tr)
	s.SampleNow() // a closed service leaves a recorded error, not a zero sample
	if s.Err("burner") == nil || len(s.Series("burner")) != len(series) {
		t.Error("sampling a closed service added a sample or no error")
	}
	s.Remove("burner")
	s.SampleNow()
	if len(s.Series("burner")) != len(series) {
		t.Error("removed service still sampled")
	}
}
