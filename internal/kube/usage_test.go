package kube

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fakeKubelet serves one node's list and its Summary API through the
// node proxy's path: on call i, the node has used 1.5 s of CPU per call,
// container app of pod web in namespace run 0.5 s per call with i MiB
// working set, and a pod of another namespace 9 s per call. Call 3
// fails, as a busy API server may.
// It returns the client and the number of summaries served so far.
func fakeKubelet(t *testing.T) (kubernetes.Interface, func() int) {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/nodes":
			fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"},"status":{"capacity":{"cpu":"2"}}}]}`)
		case "/api/v1/nodes/n1/proxy/stats/summary":
			mu.Lock()
			i := calls
			calls++
			mu.Unlock()
			if i == 3 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			at := t0.Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339)
			fmt.Fprintf(w, `{"node":{"nodeName":"n1","startTime":"2026-11-01T00:00:00Z","cpu":{"time":%q,"usageCoreNanoSeconds":%d}},
"pods":[{"podRef":{"name":"web","namespace":"run"},"containers":[{"name":"app","startTime":"2026-11-26T08:00:00Z","cpu":{"time":%q,"usageCoreNanoSeconds":%d},"memory":{"workingSetBytes":%d}},
                                                                  {"name":"starting","startTime":"2026-11-26T08:00:00Z"}]},
        {"podRef":{"name":"web","namespace":"other"},"containers":[{"name":"app","startTime":"2026-11-26T08:00:00Z","cpu":{"time":%q,"usageCoreNanoSeconds":%d}}]}]}`,
				at, 100e9+int64(i)*15e8, at, 7e9+int64(i)*5e8, (i+1)<<20, at, int64(i)*9e9)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs, func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}

func TestSamplerOverAFakeKubelet(t *testing.T) {
	cs, served := fakeKubelet(t)
	s := NewSampler(cs, "run", 10*time.Millisecond)
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for served() < 5 { // past call 3, which fails
		time.Sleep(10 * time.Millisecond)
	}
	err := s.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "1 sample(s) failed") {
		t.Errorf("a failed sample between the first and the last: %v", err)
	}
	u, err := s.Usage("web", "app")
	if err != nil {
		t.Fatal(err)
	}
	// The last sample is of call i = span/10s (a call in flight when Stop
	// came may have been cancelled: calls are not samples).
	i := int(u.To.Sub(u.From) / (10 * time.Second))
	if u.CPUSeconds != float64(i)*0.5 || u.PeakMemoryBytes != uint64(i+1)<<20 || i < 4 || u.Samples < 4 || u.Samples > served()-1 {
		t.Errorf("usage %+v, %d calls: want %.1f CPU seconds and %d MiB", u, served(), float64(i)*0.5, i+1)
	}
	if _, err := s.Usage("web", "starting"); err == nil {
		t.Error("a container without stats has usage")
	}
	nodes := s.NodeUsage()
	if len(nodes) != 1 || nodes[0].Node != "n1" || nodes[0].CPUSeconds != float64(i)*1.5 || nodes[0].CPUs != 2 || math.Abs(nodes[0].Busy-0.075) > 1e-9 {
		t.Errorf("nodes %+v", nodes)
	}
}

// Await samples until the container's stats pass the time asked (the fake
// kubelet's clock moves 10 s a call), and gives up after its bound.
func TestSamplerAwaitsFreshStats(t *testing.T) {
	cs, served := fakeKubelet(t)
	s := NewSampler(cs, "run", time.Hour) // only Start's sample and Await's
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	web := Container{Pod: "web", Name: "app"}
	if err := s.Await(ctx, t0.Add(25*time.Second), time.Minute, web); err != nil {
		t.Fatal(err)
	}
	// Calls 0, 1, 2 (t0+20s), 3 fails, 4 (t0+40s).
	if u, _ := s.Usage("web", "app"); !u.To.After(t0.Add(25*time.Second)) || served() != 5 {
		t.Errorf("stats to %s after %d calls, want past t0+25s after 5", u.To, served())
	}
	if err := s.Await(ctx, t0.Add(time.Hour), 300*time.Millisecond, web); err == nil || !strings.Contains(err.Error(), "not refreshed") {
		t.Errorf("stats that never pass the time: %v", err)
	}
	if err := s.Await(ctx, t0.Add(time.Hour), time.Second, Container{Pod: "gone", Name: "app"}); err != nil {
		t.Errorf("a container never sampled: %v", err)
	}
}
