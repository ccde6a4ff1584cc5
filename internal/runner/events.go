package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// runEvents carries out a step's events at their times from start, until
// they are done or ctx ends (the load finished first).
func runEvents(ctx context.Context, events []*study.Event, dep *Deployment, baseURL string, start time.Time) []results.EventRecord {
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(a, b *study.Event) int { return int(a.At - b.At) })
	var out []results.EventRecord
	for _, ev := range sorted {
		select {
		case <-time.After(time.Until(start.Add(ev.At))):
		case <-ctx.Done():
			return append(out, results.EventRecord{AtS: ev.At.Seconds(), Action: ev.Action, Target: ev.Target, Fault: ev.Fault, Error: "not done: the load ended first"})
		}
		rec := results.EventRecord{AtS: ev.At.Seconds(), Action: ev.Action, Target: ev.Target, Fault: ev.Fault}
		began := time.Now()
		var err error
		if ev.Action == "request" {
			rec.Status, rec.Headers, err = eventRequest(ctx, ev.Request, dep, baseURL)
		} else {
			err = fault(ctx, ev, dep)
		}
		rec.LatencyMs = float64(time.Since(began).Microseconds()) / 1000
		rec.DoneS = time.Since(start).Seconds()
		if err != nil {
			rec.Error = err.Error()
		}
		out = append(out, rec)
	}
	return out
}

// eventRequest sends a request (a mutation, say) and keeps the answer's
// status and headers, which carry what the service says it changed.
func eventRequest(ctx context.Context, t *study.Target, dep *Deployment, baseURL string) (int, map[string]string, error) {
	lt, err := loadTarget(t, baseURL, dep.values)
	if err != nil {
		return 0, nil, err
	}
	req, err := newRequest(ctx, lt)
	if err != nil {
		return 0, nil, err
	}
	resp, err := dep.client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	headers := map[string]string{}
	for k := range resp.Header {
		headers[k] = resp.Header.Get(k)
	}
	if !lt.ExpectStatus.Has(resp.StatusCode) {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.StatusCode, headers, err
}

// fault kills, pauses, resumes or restarts a service or dependency, or
// injects a fault into a link.
func fault(ctx context.Context, ev *study.Event, dep *Deployment) error {
	if ev.Action == "link" {
		return dep.linkFault(ev)
	}
	return dep.act(ctx, ev.Action, ev.Target)
}

// The actions of events on a service or dependency, as the study file
// spells them.
const (
	actKill    = "kill"
	actPause   = "pause"
	actResume  = "resume"
	actRestart = "restart"
)

// act kills, pauses, resumes or restarts every instance of a service or
// dependency.
func (d *Deployment) act(ctx context.Context, action, target string) error {
	if d.pods != nil {
		return d.pods.act(ctx, action, target)
	}
	if action == actRestart {
		if dep := d.dependency(target); dep != nil {
			return d.restartDependency(ctx, dep)
		}
		return d.restartService(ctx, target)
	}
	var errs []error
	for _, in := range d.instancesOf(target) {
		in.faulted = true
		switch action {
		case actKill:
			errs = append(errs, in.proc.Kill())
		case actPause:
			errs = append(errs, in.proc.Pause())
		case actResume:
			errs = append(errs, in.proc.Resume())
		}
	}
	return errors.Join(errs...)
}
