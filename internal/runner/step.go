package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// measurement is one step of one variant: an optional warm-up, then the
// measured load with every request recorded and the services accounted.
type measurement struct {
	step    *study.Step
	label   string
	dir     results.StepDir
	baseURL string
	service string // the load's service
	dep     *Deployment
	method  string
	log     io.Writer
	tty     bool
}

func (m *measurement) run(ctx context.Context) error {
	targets, err := loadTargets(m.step.Targets, m.baseURL, m.dep.values)
	if err != nil {
		return err
	}
	if w := m.step.Warmup; w.Requests > 0 || w.Duration > 0 {
		spec := m.spec(targets)
		spec.Requests, spec.Duration, spec.Iterations = w.Requests, w.Duration, 0
		if spec.Open && w.Requests > 0 && w.Duration == 0 {
			spec.Stages = nil
		}
		summary, err := m.load(ctx, spec, "warm-up", nil)
		if err != nil {
			return err
		}
		if err := m.dir.WriteWarmup(summary); err != nil {
			return err
		}
	}
	for _, in := range m.dep.instances {
		if err := in.tracked.ResetPeak(); err != nil {
			return fmt.Errorf("reset peak memory of %s: %w", in.name, err)
		}
	}
	before, err := m.usage()
	if err != nil {
		return err
	}
	mark := markNoise(m.dep)
	epoch := m.dep.sampler.Epoch()
	if _, err := sendHooks(ctx, m.step.Before, m.dep, m.service); err != nil {
		return err
	}
	evCtx, stopEvents := context.WithCancel(ctx)
	evDone := make(chan []results.EventRecord, 1)
	go func() { evDone <- runEvents(evCtx, m.step.Events, m.dep, m.baseURL, time.Now()) }()
	spec := m.spec(targets)
	summary, runErr := m.load(ctx, spec, "", func(e *load.Engine) (load.Sink, func() error, error) {
		w, err := m.dir.CreateRecords(e.Names(), e.TargetNames())
		return w, w.Close, err
	})
	stopEvents()
	evs := <-evDone
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if runErr != nil {
		return runErr
	}
	if len(m.step.Events) > 0 {
		if err := m.dir.WriteEvents(evs); err != nil {
			return err
		}
	}
	if len(m.step.Collect) > 0 {
		collected, err := sendHooks(ctx, m.step.Collect, m.dep, m.service)
		if err != nil {
			return err
		}
		if err := m.dir.WriteCollected(collected); err != nil {
			return err
		}
	}
	after, err := m.usage()
	if err != nil {
		return err
	}
	endMark := markNoise(m.dep)
	res := results.StepResources{Method: m.method}
	for i, in := range m.dep.instances {
		u := results.ServiceUsage{
			Name:         in.name,
			Service:      in.service,
			CPUUserS:     after[i].UserSec - before[i].UserSec,
			CPUSysS:      after[i].SysSec - before[i].SysSec,
			PeakMemBytes: after[i].PeakMemBytes,
		}
		from := summary.StartedAt.Sub(epoch)
		to := summary.EndedAt.Sub(epoch)
		for _, s := range m.dep.sampler.Series(in.name) {
			if s.T >= from && s.T <= to {
				s.T -= from
				u.Samples = append(u.Samples, s)
			}
		}
		res.Services = append(res.Services, u)
	}
	if err := m.dir.WriteResources(res); err != nil {
		return err
	}
	aud, err := audit(mark, endMark, summary, res)
	if err != nil {
		return err
	}
	if err := m.dir.WriteAudit(aud); err != nil {
		return err
	}
	invalidate(&summary, aud)
	if err := m.dir.WriteSummary(summary); err != nil {
		return err
	}
	if in := m.dep.crashed(); in != nil {
		return fmt.Errorf("%s exited during the step (%v); its log ends:\n%s", in.name, in.proc.ExitErr(), proc.LogTail(in.proc.LogPath(), 20))
	}
	fmt.Fprintf(m.log, "%s: %d req, %.1f req/s, p50 %.2f ms, p99 %.2f ms, %.2f%% ok%s\n", m.label, summary.Requests, summary.ThroughputRPS,
		summary.Latency.P50, summary.Latency.P99, 100*summary.SuccessRate, warnings(summary))
	return nil
}

func (m *measurement) usage() ([]resources.Usage, error) {
	out := make([]resources.Usage, len(m.dep.instances))
	for i, in := range m.dep.instances {
		u, err := in.tracked.Usage()
		if err != nil {
			return nil, fmt.Errorf("usage of %s: %w", in.name, err)
		}
		out[i] = u
	}
	return out, nil
}

type sinkFactory func(*load.Engine) (load.Sink, func() error, error)

// load runs one load with a progress display and returns its summary.
func (m *measurement) load(ctx context.Context, spec loadspec.Spec, what string, sink sinkFactory) (metrics.Summary, error) {
	cfg, err := spec.Config()
	if err != nil {
		return metrics.Summary{}, err
	}
	e, err := load.New(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	label := m.label
	if what != "" {
		label += " " + what
	}
	progress := &console.Progress{W: m.log, TTY: m.tty, Label: label}
	opts := load.Options{Progress: progress.Show, ProgressEvery: progress.Every()}
	closeSink := func() error { return nil }
	if sink != nil {
		s, c, err := sink(e)
		if err != nil {
			return metrics.Summary{}, err
		}
		opts.Sink, closeSink = s, c
	}
	summary, err := e.Run(ctx, opts)
	progress.Done()
	return summary, errors.Join(err, closeSink())
}

func (m *measurement) spec(targets []load.Target) loadspec.Spec {
	spec := m.step.Load
	spec.Seed = 1
	spec.Targets = targets
	spec.TagHeader = m.step.TagHeader
	return spec
}

// loadTargets turns a step's targets into requests at baseURL, filling in
// placeholders from values (variant, builds, setup captures).
func loadTargets(targets []*study.Target, baseURL string, values map[string]string) ([]load.Target, error) {
	var out []load.Target
	for _, t := range targets {
		lt, err := loadTarget(t, baseURL, values)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		out = append(out, lt)
	}
	return out, nil
}

func loadTarget(t *study.Target, baseURL string, values map[string]string) (load.Target, error) {
	// The first failed expansion is kept and returned at the end.
	var err error
	expand := func(s string) string {
		if err == nil {
			s, err = placeholder.Expand(s, values)
		}
		return s
	}
	status, serr := load.ParseStatusSet(t.ExpectStatus)
	if serr != nil {
		return load.Target{}, serr
	}
	lt := load.Target{
		Name:         t.Name,
		Method:       t.Method,
		URL:          baseURL + expand(t.Path),
		Weight:       t.Weight,
		ExpectStatus: status,
		ExpectBody:   []byte(t.ExpectBody),
	}
	for _, h := range t.Header {
		lt.Header = append(lt.Header, [2]string{h[0], expand(h[1])})
	}
	if t.Body != "" {
		lt.Body = []byte(expand(t.Body))
	}
	if len(t.Form) > 0 {
		var fields []loadspec.FormField
		for _, kv := range t.Form {
			v := expand(kv[1])
			f := loadspec.FormField{Name: kv[0], Value: v}
			if file, ok := strings.CutPrefix(v, "@"); ok {
				if !filepath.IsAbs(file) {
					file = filepath.Join(values["root"], file)
				}
				f = loadspec.FormField{Name: kv[0], File: file}
			}
			fields = append(fields, f)
		}
		if err != nil {
			return load.Target{}, err
		}
		body, contentType, ferr := loadspec.MultipartBody(fields)
		if ferr != nil {
			return load.Target{}, ferr
		}
		lt.Body = body
		lt.Header = append(lt.Header, [2]string{"Content-Type", contentType})
	}
	return lt, err
}

func warnings(s metrics.Summary) string {
	if len(s.Warnings) == 0 {
		return ""
	}
	return " — " + strings.Join(s.Warnings, "; ")
}
