package results

import "encoding/json"

// EventRecord is one line of events.json: what a step did while its load
// ran, and what came of it.
type EventRecord struct {
	AtS       float64           `json:"at_s"`   // planned, from the start of the load
	DoneS     float64           `json:"done_s"` // when it finished
	Action    string            `json:"action"`
	Target    string            `json:"target,omitempty"`
	Fault     string            `json:"fault,omitempty"` // of a link event: reset, timeout, slow_close, none
	Status    int               `json:"status,omitempty"`
	LatencyMs float64           `json:"latency_ms,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Error     string            `json:"error,omitempty"`
}

// Collected is collected.json of a step: each collect request's JSON
// answer from every instance of its service.
type Collected map[string][]InstanceAnswer

// InstanceAnswer is one instance's answer to a hook.
type InstanceAnswer struct {
	Instance string          `json:"instance"`
	Body     json.RawMessage `json:"body"`
}
