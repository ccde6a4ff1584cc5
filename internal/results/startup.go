package results

import (
	"sync"
	"time"
)

// Startup is startup.json of a variant in a repetition: how long its
// services took to start, and the first requests they answered, which is
// where a JIT-compiled runtime shows its warm-up.
type Startup struct {
	Instances []InstanceStartup `json:"instances"`
	// FirstSuccessS is from the start of the load's service to the end of
	// its first successful request, less WaitedS.
	FirstSuccessS float64 `json:"first_success_s,omitempty"`
	// WaitedS is how long the deployment waited, ready, before its first
	// requests while others of its repetition booted (deployments boot
	// two at a time where the generator's cores can be lent): not the
	// system's time to a first answer.
	WaitedS       float64        `json:"waited_s,omitempty"`
	FirstRequests []FirstRequest `json:"first_requests"`
	// Links are the emulated network links the variant ran with.
	Links []LinkSetting `json:"links,omitempty"`
	// Hosts are the emulated hosts the variant ran on (study hosts:), and
	// LabAddr msbench's side of their bridge: the generator's address,
	// and the link proxies' and the dependencies' forwarders'.
	Hosts   []HostSetting `json:"hosts,omitempty"`
	LabAddr string        `json:"lab_addr,omitempty"`
}

// HostSetting is one emulated host of a variant: a network namespace with
// its own address.
type HostSetting struct {
	Name      string   `json:"name"`
	Addr      string   `json:"addr"`
	Instances []string `json:"instances"` // the service instances it ran
}

// LinkSetting is one emulated link of a variant (study links:): its
// settings as resolved for the variant, and its proxies, one per instance
// of To.
type LinkSetting struct {
	Name         string   `json:"name"` // FROM>TO
	From         string   `json:"from"`
	To           string   `json:"to"`
	LatencyMs    float64  `json:"latency_ms"` // one way
	JitterMs     float64  `json:"jitter_ms,omitempty"`
	BandwidthBps int64    `json:"bandwidth_bps,omitempty"` // each way; 0 for no limit
	Listen       []string `json:"listen"`                  // the proxies' addresses
	Upstream     []string `json:"upstream"`                // what they forward to
}

// InstanceStartup is one service instance's time from start to ready.
type InstanceStartup struct {
	Name   string  `json:"name"`
	ReadyS float64 `json:"ready_s"`
}

// FirstRequest is one of the requests sent before the load: setup and
// verification.
type FirstRequest struct {
	Name      string    `json:"name"`
	Start     time.Time `json:"start"`
	LatencyMs float64   `json:"latency_ms"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
}

// FirstRequests collects FirstRequest entries in order.
type FirstRequests struct {
	mu       sync.Mutex
	Requests []FirstRequest
}

// Add notes a request that started at start and ended now. A nil
// FirstRequests notes nothing.
func (f *FirstRequests) Add(name string, start time.Time, status int, err error) {
	if f == nil {
		return
	}
	r := FirstRequest{Name: name, Start: start, LatencyMs: float64(time.Since(start).Microseconds()) / 1000, Status: status}
	if err != nil {
		r.Error = err.Error()
	}
	f.mu.Lock()
	f.Requests = append(f.Requests, r)
	f.mu.Unlock()
}

// FirstSuccess is when the first request without a transport error and
// with a 2xx status ended.
func (f *FirstRequests) FirstSuccess() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.Requests {
		if r.Error == "" && r.Status >= 200 && r.Status < 300 {
			return r.Start.Add(time.Duration(r.LatencyMs * float64(time.Millisecond))), true
		}
	}
	return time.Time{}, false
}
