package gateway

import (
	"strconv"
	"strings"
	"time"
)

// TimingHeader carries the per-stage durations of a request, so the load
// generator gets them with every response instead of from log files.
const TimingHeader = "Server-Timing"

// The metric names in TimingHeader.
const (
	MetricHandler = "handler" // request received by the handler → response about to be written
	MetricPre     = "pre"     // request received → call sent: parsing, and the dial under PolicyDial
	MetricRPC     = "rpc"     // call sent → result received, at the gateway
	MetricFn      = "fn"      // the function itself, measured by the RPC server
)

// timing collects the stage durations of one request. rpc and fn stay unset
// when the request failed before reaching that stage.
type timing struct {
	handler, pre, rpc, fn time.Duration
	rpcSet, fnSet         bool
}

// header formats the durations as a Server-Timing value in milliseconds,
// with nanosecond resolution because fn for /empty is well below a
// microsecond.
func (t timing) header() string {
	var b strings.Builder
	metric(&b, MetricHandler, t.handler)
	if t.rpcSet {
		b.WriteString(", ")
		metric(&b, MetricPre, t.pre)
		b.WriteString(", ")
		metric(&b, MetricRPC, t.rpc)
	}
	if t.fnSet {
		b.WriteString(", ")
		metric(&b, MetricFn, t.fn)
	}
	return b.String()
}

func metric(b *strings.Builder, name string, d time.Duration) {
	b.WriteString(name)
	b.WriteString(";dur=")
	b.WriteString(strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 6, 64))
}
