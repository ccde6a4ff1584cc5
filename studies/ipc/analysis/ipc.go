// Package ipc is the ipc study's analysis: REST, gRPC or RabbitMQ between
// the services of a product page, by the paper's closed-model tests
// (throughput against users, time to failure and to recovery) and by what
// msbench adds (latency percentiles, the knee of an open-model sweep,
// requests lost to faults, the distance between the services).
package ipc

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("ipc", ipc{}) }

type ipc struct{}

// The values of the style axis the claims name.
const (
	rest = "rest"
	grpc = "grpc"
	amqp = "amqp"
)

// styles are in the order the tables and charts give them.
var styles = []string{rest, grpc, amqp}

// The kinds of step the analysis reads, by their parameters.
var (
	closedSteps   = map[string]string{"kind": "closed"}
	openSteps     = map[string]string{"kind": "open"}
	faultSteps    = map[string]string{"kind": "fault"}
	killSteps     = map[string]string{"kind": "fault", "fault": "kill-service"}
	overloadSteps = map[string]string{"kind": "overload"}
)

func (ipc) Needs() study.Needs {
	steps := []study.StepNeed{
		{Where: closedSteps, Params: []string{"users"}, For: "throughput and latency against users, the paper's 180-s tests"},
		{Where: openSteps, Params: []string{"rate"}, For: "each style's knee under a fixed arrival rate"},
		{Where: faultSteps, Params: []string{"fault"}, For: "requests lost to each fault"},
		{Where: killSteps, For: "time to recovery from a killed service"},
		{Where: overloadSteps, Params: []string{"users"}, For: "time to failure under overload"},
	}
	for _, f := range lossFaults {
		steps = append(steps, study.StepNeed{Where: map[string]string{"kind": "fault", "fault": f}, For: "the finding on requests lost to " + f})
	}
	return study.Needs{Axes: []string{"style", "delay"}, Steps: steps, Metrics: metricIDs()}
}

// level is a step of a sweep with the number it stands for: users or a
// rate.
type level struct {
	step *study.Step
	x    float64
}

// levels reads the steps of one kind and the number param gives each, in
// ascending order; a value that is not a number is a mistake in the study
// file, reported as such.
func levels(ds *analysis.Dataset, where map[string]string, param string) ([]level, error) {
	var out []level
	for _, st := range ds.Steps(where) {
		x, err := strconv.ParseFloat(st.Params[param], 64)
		if err != nil {
			return nil, fmt.Errorf("step %s: %s %q is not a number", st.Name, param, st.Params[param])
		}
		out = append(out, level{st, x})
	}
	slices.SortStableFunc(out, func(a, b level) int { return cmp.Compare(a.x, b.x) })
	return out, nil
}

// at finds the level standing for x, nil when the run has none.
func at(ls []level, x float64) *study.Step {
	for _, l := range ls {
		if l.x == x {
			return l.step
		}
	}
	return nil
}

// stepWindow is how long a step sent requests: its duration as run, or
// for a step bounded otherwise, how long its load lasted.
func stepWindow(st *study.Step, u *analysis.Unit) time.Duration {
	if st.Load.Duration > 0 {
		return st.Load.Duration
	}
	return time.Duration(u.Summary.DurationS * 1e9)
}

// ipcRun is a run read for the analysis: its sweeps, the delay the claims
// are judged at, and what each fault and overload step's records showed,
// each records file read once.
type ipcRun struct {
	ds       *analysis.Dataset
	delays   []string // as the study lists them
	delayMs  map[string]float64
	base     string // the smallest delay: the claims are judged there
	closed   []level
	open     []level
	overload []level
	faults   []*study.Step
	// planErr says why the steps the profile skipped could not be told.
	planErr error
	// callTimeoutMs is the gateway's deadline for its five calls: a page
	// that reaches the client after it is counted as delayed.
	callTimeoutMs float64
	mttf          map[*analysis.Unit]bounded
	faultStats    map[*analysis.Unit]faultStat
}

// defaultCallTimeoutMs is the gateway's own default (src/gateway.js), for
// a study file that does not set CALL_TIMEOUT_MS.
const defaultCallTimeoutMs = 3000

func newRun(ds *analysis.Dataset) (*ipcRun, error) {
	r := &ipcRun{ds: ds, delays: ds.AxisValues("delay"), delayMs: map[string]float64{}, callTimeoutMs: defaultCallTimeoutMs}
	for _, d := range r.delays {
		v, err := links.ParseDuration(d)
		if err != nil {
			return nil, fmt.Errorf("delay axis value %q: %w", d, err)
		}
		r.delayMs[d] = float64(v.Nanoseconds()) / 1e6
		if r.base == "" || r.delayMs[d] < r.delayMs[r.base] {
			r.base = d
		}
	}
	var err error
	if r.closed, err = levels(ds, closedSteps, "users"); err != nil {
		return nil, err
	}
	if r.open, err = levels(ds, openSteps, "rate"); err != nil {
		return nil, err
	}
	if r.overload, err = levels(ds, overloadSteps, "users"); err != nil {
		return nil, err
	}
	r.faults = ds.Steps(faultSteps)
	if svc := ds.Study.Service(ds.Study.Load.Service); svc != nil {
		for _, kv := range svc.Env {
			if kv[0] != "CALL_TIMEOUT_MS" {
				continue
			}
			ms, err := strconv.ParseFloat(kv[1], 64)
			if err != nil {
				return nil, fmt.Errorf("service %s: CALL_TIMEOUT_MS %q is not a number of milliseconds", svc.Name, kv[1])
			}
			r.callTimeoutMs = ms
		}
	}
	_, r.planErr = ds.SkippedSteps(nil)
	if err := r.readRecords(); err != nil {
		return nil, err
	}
	return r, nil
}

// key is the variant of a style at a delay, "" when the run has none.
func (r *ipcRun) key(style, delay string) string {
	v, ok := r.ds.Variant(map[string]string{"style": style, "delay": delay})
	if !ok {
		return ""
	}
	return v.Key()
}

// notMeasured is the sentence a section adds for the steps of one kind it
// could not show: those the profile skipped (every variant) and those a
// variant lacks.
func (r *ipcRun) notMeasured(where map[string]string) string {
	// The variants the profile left out are named once, in the intro.
	what, _ := r.ds.SkippedSteps(where)
	return analysis.NotMeasured(append(what, r.ds.Unmeasured(r.ds.Steps(where))...))
}

func (ipc) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	r, err := newRun(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	sections := []analysis.Section{r.intro()}
	for _, f := range []func() (analysis.Section, error){r.throughputSection, r.latencySection, r.kneeSection, r.availabilitySection, r.lossSection, r.delaySection} {
		sec, err := f()
		if err != nil {
			return analysis.Result{}, err
		}
		sections = append(sections, sec)
	}
	return analysis.Result{Sections: sections, Metrics: r.metrics()}, nil
}

func (r *ipcRun) intro() analysis.Section {
	sec := analysis.Section{
		Title: "What is compared",
		Text: []string{
			"A product page: the gateway gathers product, reviews, recommendations, shipping and cart from five Node.js services, in one of three styles: REST/JSON over HTTP and gRPC/protobuf (synchronous, the gateway calls each service) or RabbitMQ (asynchronous, requests and replies through the broker). " +
				"The broker runs for every style, so that each variant has the same neighbours. The gateway gives its five calls " + analysis.Num(r.callTimeoutMs, 0) + " ms (CALL_TIMEOUT_MS) and answers 502 or 504 when one fails or is late.",
			"The paper's throughput is the requests completed in a 180-s closed-model test (JMeter; each user sends and waits). Here a closed step's throughput is its requests answered 200 with a product page in the measured window (after a warm-up sent apart), scaled to the paper's window: successes × 180 s / the step's duration. " +
				"In a closed model throughput is users / (response time + think time), so the absolute count depends on the machine (the paper: 3 nodes of 2 vCPU on Azure); the claims are judged on the order of the styles and on ratios measured side by side in the same repetition, never on absolute counts.",
		},
	}
	if len(r.delays) > 0 {
		sec.Text = append(sec.Text, "Emulated links of "+strings.Join(r.delays, ", ")+" one way put distance between the gateway and each service and between the gateway and the broker, so that a call crosses a link twice in every style. The claims are judged at "+r.base+"; the last section shows how the ranking moves with distance.")
	}
	if r.planErr != nil {
		sec.Text = append(sec.Text, "Could not read the study file as run ("+r.planErr.Error()+"), so the steps the profile skipped are not named below.")
	} else if skipped, _ := r.ds.SkippedVariants(); len(skipped) > 0 {
		sec.Text = append(sec.Text, "The profile left out variants: "+strings.Join(skipped, ", ")+".")
	}
	return sec
}
