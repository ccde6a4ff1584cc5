package fanout

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
)

// Generator is what one generator of a merged step measured of its share,
// kept beside the step in generators.json: the audit's saturation is per
// generator, since each sends from a core of its own.
type Generator struct {
	Share          Share     `json:"share"`
	Dir            string    `json:"dir"`
	StartedAt      time.Time `json:"started_at"`
	EndedAt        time.Time `json:"ended_at"`
	Requests       int64     `json:"requests"`
	Users          int       `json:"users,omitempty"`
	Connections    int       `json:"connections"`
	AchievedRPS    float64   `json:"achieved_rps"`
	AchievedRateOK bool      `json:"achieved_rate_ok"`
	Valid          bool      `json:"valid"`
	// Workers are the worker numbers (users, or connections in the open
	// model) this generator's requests carry in the merged records, from
	// the first to one past the last.
	Workers          [2]int64 `json:"workers"`
	GeneratorCPUS    float64  `json:"generator_cpu_s"`
	GeneratorCPUUtil float64  `json:"generator_cpu_utilization"`
	GeneratorCPUs    string   `json:"generator_cpus,omitempty"`
	// Saturated: busier than results.MaxGeneratorCPU of its core, so the
	// generator, not the server, may have set the pace.
	Saturated bool     `json:"saturated"`
	Warnings  []string `json:"warnings"`
}

// GeneratorsFile is the file of a merged step that lists its generators.
const GeneratorsFile = "generators.json"

// part is one generator's output as Merge reads it.
type part struct {
	dir     results.StepDir
	spec    Spec
	summary metrics.Summary
}

// Merged is the outputs that the generators of one step's load wrote
// (Generate, one directory each), read, checked to be the shares of one
// load, and merged into what one generator would have measured:
//
//   - HDR histograms are merged exactly (metrics.Merge), so percentiles
//     are those of every request together, within HDR's precision.
//   - Counts (requests, errors by kind, status codes, bytes, late
//     starts, unsent arrivals) add up; rates are over the union's span,
//     from the agreed start to the last generator's end; target rates add
//     up; the open model's achieved rate is over the longest sending
//     window.
//   - Thresholds are judged on the whole: the minimum success rate on all
//     requests; the achieved rate holds if every generator achieved its
//     share's. Each generator's own warnings are kept, naming it.
//   - Generator CPU adds up; the summary's utilization (the audit's
//     saturation test) is the busiest generator's, each sending from a
//     core of its own; Generators has each.
//   - Records (WriteRecords) are concatenated in order of intended start
//     (ties: by generator, then by its own order) and renumbered from 0
//     in that order, so sequence numbers are unique and, in the open
//     model with every arrival sent, each request's index in the one
//     schedule. Worker numbers are offset per generator (see
//     Generator.Workers) so no two generators' users share one.
type Merged struct {
	Summary    metrics.Summary
	Generators []Generator
	parts      []part
}

// Read reads and merges the generators' outputs in dirs.
func Read(dirs []results.StepDir) (*Merged, error) {
	parts, err := readParts(dirs)
	if err != nil {
		return nil, err
	}
	summaries := make([]metrics.Summary, len(parts))
	for i, p := range parts {
		summaries[i] = p.summary
	}
	s, err := metrics.Merge(summaries)
	if err != nil {
		return nil, fmt.Errorf("merge generators: %w", err)
	}
	gens := whole(&s, parts)
	return &Merged{Summary: s, Generators: gens, parts: parts}, nil
}

// Merge writes into out the one step the generators' outputs in dirs
// make (see Merged): records.parquet, generators.json and, last, as it
// marks a step measured, summary.json.
func Merge(out results.StepDir, dirs []results.StepDir) (*Merged, error) {
	m, err := Read(dirs)
	if err != nil {
		return nil, err
	}
	w, err := out.CreateRecords(nil, nil)
	if err != nil {
		return nil, err
	}
	if err := m.WriteRecords(w, records.Segment{}); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := m.WriteGenerators(out); err != nil {
		return nil, err
	}
	return m, out.WriteSummary(m.Summary)
}

// WriteGenerators keeps the generators' own figures beside the step.
func (m *Merged) WriteGenerators(dir results.StepDir) error {
	return results.WriteJSON(filepath.Join(string(dir), GeneratorsFile), m.Generators)
}

// readParts reads each generator's output and checks that they are the
// shares of one load, every share once; it returns them in share order.
func readParts(dirs []results.StepDir) ([]part, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge generators: no output to merge")
	}
	parts := make([]part, len(dirs))
	for i, d := range dirs {
		p := part{dir: d}
		if err := results.ReadJSON(filepath.Join(string(d), specFile), &p.spec); err != nil {
			return nil, fmt.Errorf("merge generators: %s: %w", d, err)
		}
		var err error
		if p.summary, err = d.ReadSummary(); err != nil {
			return nil, fmt.Errorf("merge generators: %s: %w", d, err)
		}
		if err := d.Check(p.summary); err != nil {
			return nil, fmt.Errorf("merge generators: %w", err)
		}
		parts[i] = p
	}
	slices.SortFunc(parts, func(a, b part) int { return cmp.Compare(a.spec.Share.Index, b.spec.Share.Index) })
	first, err := json.Marshal(parts[0].spec.Load)
	if err != nil {
		return nil, fmt.Errorf("merge generators: %w", err)
	}
	for i, p := range parts {
		if p.spec.Share != (Share{i, len(parts)}) {
			return nil, fmt.Errorf("merge generators: %s is %s, but %d outputs were given: %s is missing or repeated", p.dir, p.spec.Share, len(parts), Share{i, len(parts)})
		}
		if !p.spec.Start.Equal(parts[0].spec.Start) {
			return nil, fmt.Errorf("merge generators: %s started at %s, %s at %s: not one load", p.dir, p.spec.Start, parts[0].dir, parts[0].spec.Start)
		}
		ld, err := json.Marshal(p.spec.Load)
		if err != nil {
			return nil, fmt.Errorf("merge generators: %w", err)
		}
		if string(ld) != string(first) {
			return nil, fmt.Errorf("merge generators: %s and %s ran different loads", p.dir, parts[0].dir)
		}
	}
	return parts, nil
}

// whole turns the parts' merged summary, which metrics.Merge made for
// parts measured one after another, into that of parts measured at once,
// and lists the generators.
func whole(s *metrics.Summary, parts []part) []Generator {
	s.DurationS = s.EndedAt.Sub(s.StartedAt).Seconds()
	s.Users, s.Connections, s.TargetRPS = 0, 0, 0
	s.Warnings = []string{}
	s.GeneratorCPUUtil, s.GeneratorCPUs = 0, ""
	var sending float64 // the longest sending window, as each part's AchievedRPS divides by
	gens := make([]Generator, len(parts))
	var worker int64
	for i, p := range parts {
		ps := p.summary
		s.Users += ps.Users
		s.Connections += ps.Connections
		s.TargetRPS += ps.TargetRPS
		if ps.AchievedRPS > 0 {
			sending = max(sending, float64(ps.Requests)/ps.AchievedRPS)
		}
		if ps.GeneratorCPUUtil >= s.GeneratorCPUUtil {
			s.GeneratorCPUUtil, s.GeneratorCPUs = ps.GeneratorCPUUtil, ps.GeneratorCPUs
		}
		for _, w := range ps.Warnings {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s", p.spec.Share, w))
		}
		workers := int64(ps.Connections)
		if ps.Model == "closed" {
			workers = int64(ps.Users)
		}
		gens[i] = Generator{
			Share: p.spec.Share, Dir: string(p.dir), StartedAt: ps.StartedAt, EndedAt: ps.EndedAt,
			Requests: ps.Requests, Users: ps.Users, Connections: ps.Connections,
			AchievedRPS: ps.AchievedRPS, AchievedRateOK: ps.AchievedRateOK, Valid: ps.Valid,
			Workers:       [2]int64{worker, worker + workers},
			GeneratorCPUS: ps.GeneratorCPUS, GeneratorCPUUtil: ps.GeneratorCPUUtil, GeneratorCPUs: ps.GeneratorCPUs,
			Saturated: ps.GeneratorCPUUtil > results.MaxGeneratorCPU,
			Warnings:  ps.Warnings,
		}
		worker += workers
	}
	if s.DurationS > 0 {
		s.ThroughputRPS = float64(s.Requests) / s.DurationS
	}
	s.AchievedRPS = s.ThroughputRPS
	if s.Model == "open" && sending > 0 {
		s.AchievedRPS = float64(s.Requests) / sending
	}
	minSuccess := loadspec.DefaultMinSuccess
	if m := parts[0].spec.Load.MinSuccess; m != nil {
		minSuccess = *m
	}
	s.SuccessRateOK = s.SuccessRate >= minSuccess
	if !s.SuccessRateOK {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d of %d requests succeeded (%.2f%%) over the %d generators, under the minimum of %.2f%%: the result is invalid",
			s.Successes, s.Requests, 100*s.SuccessRate, len(parts), 100*minSuccess))
	}
	s.Valid = s.AchievedRateOK && s.SuccessRateOK
	return gens
}

// WriteRecords writes the generators' records to w as segment at of its
// file (its slice, and the sequence numbers and time before it: see
// records.Segment), whose names and targets it sets. The records are
// held in memory while they are sorted.
func (m *Merged) WriteRecords(w *records.Writer, at records.Segment) error {
	type row struct {
		records.Row
		gen int
	}
	var rows []row
	for i, p := range m.parts {
		rs, err := p.dir.ReadRecords()
		if err != nil {
			return fmt.Errorf("merge generators: %w", err)
		}
		for _, r := range rs {
			r.Worker += int32(m.Generators[i].Workers[0])
			rows = append(rows, row{r, i})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Intended, b.Intended), cmp.Compare(a.gen, b.gen), cmp.Compare(a.Seq, b.Seq))
	})
	var targets []string
	for _, r := range rows {
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
	}
	var names metrics.Names
	at.Names, at.Targets = &names, targets
	w.Begin(at)
	batch := make([]metrics.Record, 0, 4096)
	for i := range rows {
		r, err := record(&rows[i].Row, uint64(i), &names, targets)
		if err != nil {
			return fmt.Errorf("merge generators: %s: %w", m.parts[rows[i].gen].dir, err)
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == len(rows)-1 {
			if err := w.Write(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// errorClasses reads a record's error text back into its class.
var errorClasses = func() map[string]metrics.ErrorClass {
	m := map[string]metrics.ErrorClass{}
	for c := metrics.OK; c.String() != "unknown"; c++ {
		m[c.String()] = c
	}
	return m
}()

// record is a row read back as the engine recorded it, numbered seq, its
// target and Server-Timing names indexed in the merged file's tables.
func record(r *records.Row, seq uint64, names *metrics.Names, targets []string) (metrics.Record, error) {
	class, ok := errorClasses[r.Error]
	if !ok {
		return metrics.Record{}, fmt.Errorf("request %d: unknown error %q", r.Seq, r.Error)
	}
	rec := metrics.Record{
		Seq:      seq,
		Intended: r.Intended,
		Sent:     r.Sent,
		// Exact: a latency in ns has at most 13 digits, well within a
		// float64's 15.
		Done:     r.Intended + int64(math.Round(r.LatencyMs*1e6)),
		BytesIn:  r.BytesIn,
		BytesOut: r.BytesOut,
		Tag:      uint64(r.Tag),
		Worker:   uint32(r.Worker),
		Target:   uint16(slices.Index(targets, r.Target)),
		Status:   uint16(r.Status),
		Err:      class,
	}
	for _, t := range r.ServerTiming {
		idx, ok := names.Index([]byte(t.Name))
		if !ok || rec.NTimings == metrics.MaxTimings {
			continue
		}
		rec.Timings[rec.NTimings] = metrics.Timing{Metric: idx, Ms: t.Ms}
		rec.NTimings++
	}
	return rec, nil
}
