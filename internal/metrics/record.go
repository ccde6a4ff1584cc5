// Package metrics holds what the load engine measures about each request and
// turns a stream of those records into summaries: counts, rates and HDR
// latency distributions.
package metrics

import (
	"sync"
	"sync/atomic"
)

// ErrorClass says why a request did not count as a success.
type ErrorClass uint8

const (
	OK ErrorClass = iota
	Timeout
	Refused
	Reset
	Closed
	Network
	Status
	Body
	numClasses
)

var classNames = [numClasses]string{
	OK:      "",
	Timeout: "timeout",
	Refused: "connection refused",
	Reset:   "connection reset",
	Closed:  "connection closed",
	Network: "network error",
	Status:  "unexpected status",
	Body:    "body mismatch",
}

func (c ErrorClass) String() string {
	if c >= numClasses {
		return "unknown"
	}
	return classNames[c]
}

// MaxTimings bounds the Server-Timing metrics kept per request so a record
// has a fixed size and recording never allocates.
const MaxTimings = 8

// Timing is one Server-Timing metric of one request.
type Timing struct {
	Metric uint8 // index into the run's Names
	Ms     float64
}

// Record is one request. Times are nanoseconds since the load started, on
// the monotonic clock.
type Record struct {
	Seq      uint64
	Intended int64 // when the schedule wanted it sent
	Sent     int64 // when it was handed to the connection
	Done     int64 // when the response (or the error) arrived
	BytesIn  int64
	BytesOut int64
	Tag      uint64 // a number the response carried in the load's tag header, e.g. a data version
	Worker   uint32
	Target   uint16
	Status   uint16
	Err      ErrorClass
	NTimings uint8
	Timings  [MaxTimings]Timing
}

// Latency is measured from the intended time, so time spent waiting for a
// free connection or behind a stalled server counts (coordinated omission
// corrected).
func (r *Record) Latency() int64 { return r.Done - r.Intended }

// ServiceTime is measured from the actual send, as a closed-loop tool would.
func (r *Record) ServiceTime() int64 { return r.Done - r.Sent }

// Lag is how late the request left compared with its schedule.
func (r *Record) Lag() int64 { return r.Sent - r.Intended }

// Names interns Server-Timing metric names so that records carry a small
// index instead of a string. Lookups on the request path take no lock.
type Names struct {
	mu    sync.Mutex
	names atomic.Pointer[[]string]
}

const maxNames = 255

// Index returns the index of name, adding it when new. ok is false once the
// table is full; such metrics are dropped and counted by the caller.
func (n *Names) Index(name []byte) (idx uint8, ok bool) {
	if p := n.names.Load(); p != nil {
		for i, s := range *p {
			if s == string(name) {
				return uint8(i), true
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var cur []string
	if p := n.names.Load(); p != nil {
		cur = *p
	}
	for i, s := range cur {
		if s == string(name) {
			return uint8(i), true
		}
	}
	if len(cur) >= maxNames {
		return 0, false
	}
	next := make([]string, len(cur), len(cur)+1)
	copy(next, cur)
	next = append(next, string(name))
	n.names.Store(&next)
	return uint8(len(cur)), true
}

// Name returns the name at idx.
func (n *Names) Name(idx uint8) string {
	if p := n.names.Load(); p != nil && int(idx) < len(*p) {
		return (*p)[idx]
	}
	return ""
}

// All returns every name interned so far, in index order.
func (n *Names) All() []string {
	if p := n.names.Load(); p != nil {
		return *p
	}
	return nil
}
