package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Method says how Usage and NodeUsage are measured, for the report.
const Method = "kubelet Summary API through the API server's node proxy (/api/v1/nodes/NODE/proxy/stats/summary): " +
	"CPU seconds are the growth of usageCoreNanoSeconds between the first and the last sample (a restarted container's runs added up), " +
	"peak memory the highest workingSetBytes of the samples; the kubelet refreshes these on its own schedule (on the local cluster " +
	"about every second for containers and every 10 s for the node), so the window measured is that between the stats' own timestamps " +
	"(from, to); the Summary API has no steal time"

// Usage is one container's use of the node over the sampler's window.
type Usage struct {
	CPUSeconds      float64   `json:"cpu_s"`
	PeakMemoryBytes uint64    `json:"peak_memory_bytes"`
	From            time.Time `json:"from"`
	To              time.Time `json:"to"`
	Samples         int       `json:"samples"`
	Restarts        int       `json:"restarts,omitempty"`
}

// NodeUsage is one node's CPU over the sampler's window, for the noise
// audit: how busy the node was besides what the run measured.
type NodeUsage struct {
	Node       string    `json:"node"`
	CPUSeconds float64   `json:"cpu_s"`
	CPUs       float64   `json:"cpus"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	// Busy is the share of the node's CPUs used over the window.
	Busy float64 `json:"busy"`
}

// Sampler samples the Summary API of every node while it runs, for the
// containers of one namespace and for the nodes themselves.
type Sampler struct {
	client    kubernetes.Interface
	namespace string
	every     time.Duration

	mu         sync.Mutex
	nodes      map[string]*nodeTrack
	containers map[containerKey]*track
	missed     int // samples that failed between the first and the last
	stop       context.CancelFunc
	done       chan struct{}
}

type containerKey struct{ pod, container string }

// track follows one cumulative CPU counter and a peak.
type track struct {
	start      time.Time // the container's start: a new one is a restart
	base, last uint64    // usageCoreNanoSeconds at the window's start and now
	before     uint64    // what earlier runs of the container used in the window
	from, to   time.Time
	peak       uint64
	lastMem    uint64 // the last sample's memory, where ResetPeak starts
	samples    int
	restarts   int
}

type nodeTrack struct {
	cpus       float64
	windowFrom time.Time // the node's first stats: containers started later used all their CPU in the window
	cpu        track
}

// NewSampler samples namespace's containers every period (a second when
// not positive) once started.
func NewSampler(cs kubernetes.Interface, namespace string, every time.Duration) *Sampler {
	if every <= 0 {
		every = time.Second
	}
	return &Sampler{client: cs, namespace: namespace, every: every, nodes: map[string]*nodeTrack{}, containers: map[containerKey]*track{}}
}

// Start takes the first sample of every node and samples on until Stop.
func (s *Sampler) Start(ctx context.Context) error {
	nodes, err := s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("usage sampler: nodes: %w", err)
	}
	for _, n := range nodes.Items {
		s.nodes[n.Name] = &nodeTrack{cpus: cores(n.Status.Capacity)}
	}
	if err := s.sample(ctx); err != nil {
		return err
	}
	ctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s.sample(ctx) != nil && ctx.Err() == nil {
					s.mu.Lock()
					s.missed++
					s.mu.Unlock()
				}
			}
		}
	}()
	return nil
}

// Stop ends the sampling with a last sample. A sample that failed in
// between is an error: a peak may have been missed.
func (s *Sampler) Stop(ctx context.Context) error {
	if s.stop == nil {
		return errors.New("usage sampler: stopped before it started")
	}
	s.stop()
	<-s.done
	if err := s.sample(ctx); err != nil {
		return err
	}
	if s.missed > 0 {
		return fmt.Errorf("usage sampler: %d sample(s) failed: peak memory may be missed", s.missed)
	}
	return nil
}

// Usage is a container's use over the window.
func (s *Sampler) Usage(pod, container string) (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.containers[containerKey{pod, container}]
	if !ok {
		return Usage{}, fmt.Errorf("usage: no stats of container %s of pod %s/%s in the window", container, s.namespace, pod)
	}
	return Usage{CPUSeconds: t.cpuSeconds(), PeakMemoryBytes: t.peak, From: t.from, To: t.to, Samples: t.samples, Restarts: t.restarts}, nil
}

// ResetPeak starts a container's peak memory again from its last sample,
// as a step begins; a container not sampled yet has none to reset.
func (s *Sampler) ResetPeak(pod, container string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.containers[containerKey{pod, container}]; ok {
		t.peak = t.lastMem
	}
}

// Container names one container of a pod, for Await.
type Container struct{ Pod, Name string }

// Await samples until the kubelets' stats of every container given are
// from t or later, or until bound: a usage read at once after a load
// would miss what it used since the kubelet's last refresh (about a
// second on the local cluster), most of a short step's CPU. A container
// not sampled yet is not waited for.
func (s *Sampler) Await(ctx context.Context, t time.Time, bound time.Duration, containers ...Container) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last error // a busy API server may fail a sample: the next may do
	for {
		if s.fresh(t, containers) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("usage sampler: the kubelet's stats not refreshed past %s within %v (last error: %v)", t.Format(time.RFC3339Nano), bound, last)
		case <-time.After(awaitGap):
		}
		last = s.sample(ctx)
	}
}

// awaitGap is how often Await asks the kubelets again.
const awaitGap = 200 * time.Millisecond

func (s *Sampler) fresh(t time.Time, containers []Container) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range containers {
		if tr, ok := s.containers[containerKey{c.Pod, c.Name}]; ok && tr.to.Before(t) {
			return false
		}
	}
	return true
}

// NodeUsage is every node's CPU over the window.
func (s *Sampler) NodeUsage() []NodeUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]NodeUsage, 0, len(s.nodes))
	for _, name := range slices.Sorted(maps.Keys(s.nodes)) {
		n := s.nodes[name]
		u := NodeUsage{Node: name, CPUSeconds: n.cpu.cpuSeconds(), CPUs: n.cpus, From: n.cpu.from, To: n.cpu.to}
		if span := u.To.Sub(u.From).Seconds(); span > 0 && u.CPUs > 0 {
			u.Busy = u.CPUSeconds / span / u.CPUs
		}
		out = append(out, u)
	}
	return out
}

func (t *track) cpuSeconds() float64 { return float64(t.before+t.last-t.base) / 1e9 }

// observe adds a sample of a cumulative counter taken at, by a container
// (or node) started at start. One first seen after windowFrom started
// within the window, and counts from zero.
func (t *track) observe(start, windowFrom, at time.Time, value, memory uint64) {
	switch {
	case t.samples == 0:
		t.start, t.from, t.last = start, at, value
		t.base = value
		if start.After(windowFrom) && !windowFrom.IsZero() {
			t.base = 0
		}
	case !start.Equal(t.start) || value < t.last:
		t.before += t.last - t.base
		t.start, t.base, t.last = start, 0, value
		t.restarts++
	default:
		t.last = value
	}
	t.to = at
	t.peak = max(t.peak, memory)
	t.lastMem = memory
	t.samples++
}

// summary is the part of the kubelet's Summary API the sampler reads.
type summary struct {
	Node struct {
		StartTime time.Time `json:"startTime"`
		CPU       *cpuStats `json:"cpu"`
	} `json:"node"`
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		Containers []struct {
			Name      string    `json:"name"`
			StartTime time.Time `json:"startTime"`
			CPU       *cpuStats `json:"cpu"`
			Memory    *struct {
				WorkingSetBytes *uint64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"containers"`
	} `json:"pods"`
}

type cpuStats struct {
	Time                 time.Time `json:"time"`
	UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
}

// sample reads every node's summary once.
func (s *Sampler) sample(ctx context.Context) error {
	var errs []error
	for name := range s.nodes {
		sum, err := s.summary(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.add(name, sum)
	}
	return errors.Join(errs...)
}

func (s *Sampler) summary(ctx context.Context, node string) (summary, error) {
	var sum summary
	raw, err := s.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		return sum, fmt.Errorf("usage sampler: stats of node %s: %w", node, err)
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		return sum, fmt.Errorf("usage sampler: stats of node %s: %w", node, err)
	}
	return sum, nil
}

func (s *Sampler) add(node string, sum summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[node]
	if c := sum.Node.CPU; c != nil && c.UsageCoreNanoSeconds != nil {
		n.cpu.observe(sum.Node.StartTime, time.Time{}, c.Time, *c.UsageCoreNanoSeconds, 0)
		if n.windowFrom.IsZero() {
			n.windowFrom = c.Time
		}
	}
	for _, p := range sum.Pods {
		if p.PodRef.Namespace != s.namespace {
			continue
		}
		for _, c := range p.Containers {
			if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil {
				continue // just started: no stats yet
			}
			var memory uint64
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				memory = *c.Memory.WorkingSetBytes
			}
			k := containerKey{p.PodRef.Name, c.Name}
			t := s.containers[k]
			if t == nil {
				t = &track{}
				s.containers[k] = t
			}
			t.observe(c.StartTime, n.windowFrom, c.CPU.Time, *c.CPU.UsageCoreNanoSeconds, memory)
		}
	}
}
