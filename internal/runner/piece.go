package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// measurement is one step of one variant: an optional warm-up, then the
// measured load with every request recorded and the services accounted.
// The load is measured in one piece, or in slices taking turns with the
// repetition's other variants (interleave.go); either way the step's
// files hold one load: the pieces' summaries merged, their records in one
// file, their CPU summed, one audit over their windows.
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

	targets []load.Target
	records *records.Writer
	pieces  []metrics.Summary
	cpu     []resources.Usage    // per instance of dep, summed over the pieces
	samples [][]resources.Sample // per instance, on the pieces' measured-time axis
	audit   results.AuditInput   // summed over the pieces
	idleCPU float64              // the other deployments', during the pieces
	// generatorsCPU is what the generator pods used in the last piece,
	// on a cluster.
	generatorsCPU float64
	events        []results.EventRecord
}

// run measures the step in one piece, while the deployments others wait.
func (m *measurement) run(ctx context.Context, others []*Deployment) error {
	if err := m.prepare(ctx); err != nil {
		return err
	}
	if err := m.piece(ctx, m.spec(), 0, others, 0); err != nil {
		m.abandon()
		return err
	}
	if err := m.finish(ctx); err != nil {
		return err
	}
	return crashed(m.dep)
}

// crashed says which instance of d exited on its own, with its log's
// end; nil when none did.
func crashed(d *Deployment) error {
	if in := d.crashed(); in != nil {
		return fmt.Errorf("%s exited during the step (%v); its log ends:\n%s", in.name, in.proc.ExitErr(), proc.LogTail(in.proc.LogPath(), 20))
	}
	return nil
}

// prepare readies a step measured in one piece: open, the warm-up, then
// ready. A step that fails to get ready leaves no records file.
func (m *measurement) prepare(ctx context.Context) error {
	if err := m.open(); err != nil {
		return err
	}
	err := m.warmup(ctx)
	if err == nil {
		err = m.ready(ctx)
	}
	if err != nil {
		m.abandon()
	}
	return err
}

// open resolves the targets and opens the records file.
func (m *measurement) open() error {
	var err error
	if m.targets, err = loadTargets(m.step.Targets, m.baseURL, m.dep.values); err != nil {
		return err
	}
	m.cpu = make([]resources.Usage, len(m.dep.instances))
	m.samples = make([][]resources.Sample, len(m.dep.instances))
	m.records, err = m.dir.CreateRecords(nil, nil)
	return err
}

// warmup sends the step's warm-up, if it has one, and keeps its summary.
func (m *measurement) warmup(ctx context.Context) error {
	w := m.step.Warmup
	if !w.Set() {
		return nil
	}
	spec := m.spec()
	spec.Requests, spec.Duration, spec.Iterations = w.Requests, w.Duration, 0
	if spec.Open && w.Requests > 0 && w.Duration == 0 {
		spec.Stages = nil
	}
	summary, err := m.load(ctx, spec, "warm-up", nil, 0, nil)
	if err != nil {
		return err
	}
	return m.dir.WriteWarmup(summary)
}

// ready is what comes right before the step's first measured load: the
// peak memory started afresh and the before hooks sent.
func (m *measurement) ready(ctx context.Context) error {
	for _, in := range m.dep.instances {
		if err := in.tracked.ResetPeak(); err != nil {
			return fmt.Errorf("reset peak memory of %s: %w", in.name, err)
		}
	}
	_, err := sendHooks(ctx, m.step.Before, m.dep, m.service)
	return err
}

// abandon drops a step that will not finish; its records file never
// appears.
func (m *measurement) abandon() {
	if m.records != nil {
		m.records.Abort()
		m.records = nil
	}
}

// piece measures one load of the step (the whole, or slice number slice)
// and adds it to what the step measured. others are the deployments that
// wait meanwhile, whose CPU counts as the run's, not as foreign. A lead,
// if any, is the load's warm-up sent by its own users without a pause
// (load.Config.Lead): the piece's accounts open when it ends.
func (m *measurement) piece(ctx context.Context, spec loadspec.Spec, slice int32, others []*Deployment, lead time.Duration) error {
	var (
		before     []resources.Usage
		idleBefore float64
		mark       noiseMark
		openErr    error
	)
	open := func() {
		before, idleBefore, openErr = m.snapshot(others)
		mark = markNoise(m.dep)
	}
	epoch := m.dep.sampler.Epoch()
	evCtx, stopEvents := context.WithCancel(ctx)
	evDone := make(chan []results.EventRecord, 1)
	go func() { evDone <- runEvents(evCtx, m.step.Events, m.dep, m.baseURL, time.Now()) }()
	var seq, at int64
	for _, p := range m.pieces {
		seq += p.Requests
		at += int64(p.DurationS * 1e9)
	}
	label := ""
	if slice > 0 {
		label = fmt.Sprintf("slice %d", slice)
	}
	summary, runErr := m.load(ctx, spec, label, &records.Segment{Slice: slice, Seq: seq, Time: at}, lead, open)
	stopEvents()
	m.events = append(m.events, <-evDone...)
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if runErr != nil {
		return runErr
	}
	if openErr != nil {
		return openErr
	}
	if before == nil {
		return fmt.Errorf("%s: the load ended in its lead of %v, nothing measured", m.label, lead)
	}
	if m.dep.pods != nil {
		// The kubelet's stats lag the load by up to its refresh; a
		// cluster whose clock is ahead of msbench's, or stalls, gives the
		// usage read now, and the log says so.
		if err := m.dep.pods.fresh(ctx, summary.EndedAt); err != nil {
			fmt.Fprintf(m.log, "%s: warning: %v\n", m.label, err)
		}
	}
	after, idleAfter, err := m.snapshot(others)
	if err != nil {
		return err
	}
	end := markNoise(m.dep)
	from, to := summary.StartedAt.Sub(epoch), summary.EndedAt.Sub(epoch)
	shift := time.Duration(at) - from
	var runCPU float64
	for i, in := range m.dep.instances {
		m.cpu[i].UserSec += after[i].UserSec - before[i].UserSec
		m.cpu[i].SysSec += after[i].SysSec - before[i].SysSec
		m.cpu[i].PeakMemBytes = after[i].PeakMemBytes
		runCPU += after[i].CPUSec() - before[i].CPUSec()
		for _, s := range m.dep.sampler.Series(in.name) {
			if s.T >= from && s.T <= to {
				s.T += shift
				m.samples[i] = append(m.samples[i], s)
			}
		}
	}
	idle := idleAfter - idleBefore
	w, err := window(mark, end, runCPU+idle)
	if err != nil {
		return err
	}
	if m.dep.pods != nil {
		w = onCluster(w, runCPU+idle+m.generatorsCPU)
	}
	m.idleCPU += idle
	m.audit = add(m.audit, w)
	m.pieces = append(m.pieces, summary)
	return nil
}

// finish writes the step's files from its pieces: the records, the
// events, the collect hooks' answers, the resources, the audit and, last,
// the summary that marks the step measured.
func (m *measurement) finish(ctx context.Context) error {
	err := m.records.Close()
	m.records = nil
	if err != nil {
		return err
	}
	summary, err := metrics.Merge(m.pieces)
	if err != nil {
		return err
	}
	if len(m.step.Events) > 0 {
		if err := m.dir.WriteEvents(m.events); err != nil {
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
	res := results.StepResources{Method: m.method, IdleCPUS: m.idleCPU}
	for i, in := range m.dep.instances {
		res.Services = append(res.Services, results.ServiceUsage{
			Name:         in.name,
			Service:      in.service,
			CPUUserS:     m.cpu[i].UserSec,
			CPUSysS:      m.cpu[i].SysSec,
			PeakMemBytes: m.cpu[i].PeakMemBytes,
			Samples:      m.samples[i],
		})
	}
	if err := m.dir.WriteResources(res); err != nil {
		return err
	}
	in := m.audit
	in.Summary = summary
	aud := results.NewAudit(in)
	if err := m.dir.WriteAudit(aud); err != nil {
		return err
	}
	invalidate(&summary, aud)
	if m.dep.pods != nil {
		summary.Warnings = append(summary.Warnings, "on a cluster the noise audit judges the generators' saturation and the rate only: the kubelet's stats have no steal time, and this machine's say nothing of the nodes")
	}
	if err := m.dir.WriteSummary(summary); err != nil {
		return err
	}
	fmt.Fprintf(m.log, "%s: %d req, %.1f req/s, p50 %.2f ms, p99 %.2f ms, %.2f%% ok%s\n", m.label, summary.Requests, summary.ThroughputRPS,
		summary.Latency.P50, summary.Latency.P99, 100*summary.SuccessRate, warnings(summary))
	return nil
}

// snapshot is what each instance of the step's deployment has used so
// far, and the CPU of every instance of the waiting deployments.
func (m *measurement) snapshot(others []*Deployment) ([]resources.Usage, float64, error) {
	own, err := usage(m.dep)
	if err != nil {
		return nil, 0, err
	}
	var idle float64
	for _, d := range others {
		us, err := usage(d)
		if err != nil {
			return nil, 0, err
		}
		for _, u := range us {
			idle += u.CPUSec()
		}
	}
	return own, idle, nil
}

// usage is what each accounted instance of d has used so far.
func usage(d *Deployment) ([]resources.Usage, error) {
	out := make([]resources.Usage, len(d.instances))
	for i, in := range d.instances {
		u, err := in.tracked.Usage()
		if err != nil {
			return nil, fmt.Errorf("usage of %s: %w", in.name, err)
		}
		out[i] = u
	}
	return out, nil
}

// load runs one load with a progress display and returns its summary;
// its records go to the step's file as segment seg (nil: none kept, a
// warm-up's). measuring, if set, is called when the measured load starts:
// at once, or after the lead (see piece).
func (m *measurement) load(ctx context.Context, spec loadspec.Spec, what string, seg *records.Segment, lead time.Duration, measuring func()) (metrics.Summary, error) {
	label := m.label
	if what != "" {
		label += " " + what
	}
	progress := &console.Progress{W: m.log, TTY: m.tty, Label: label}
	defer progress.Done()
	if m.dep.pods != nil {
		if measuring != nil {
			measuring()
		}
		return m.loadFromPods(ctx, spec, seg, progress.Show)
	}
	cfg, err := spec.Config()
	if err != nil {
		return metrics.Summary{}, err
	}
	cfg.Lead = lead
	e, err := load.New(cfg)
	if err != nil {
		return metrics.Summary{}, err
	}
	opts := load.Options{Progress: progress.Show, ProgressEvery: progress.Every(), Measuring: measuring}
	if seg != nil {
		seg.Names, seg.Targets = e.Names(), e.TargetNames()
		m.records.Begin(*seg)
		opts.Sink = m.records
	}
	return e.Run(ctx, opts)
}

func (m *measurement) spec() loadspec.Spec {
	spec := m.step.Load
	spec.Seed = 1
	spec.Targets = m.targets
	spec.TagHeader = m.step.TagHeader
	return spec
}
