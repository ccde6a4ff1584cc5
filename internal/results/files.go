package results

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/study"
)

// jsonFile is one kind of JSON file of a run directory: its name and the
// type it holds, so that writers and readers cannot disagree on either.
type jsonFile[T any] string

func (f jsonFile[T]) write(dir string, v T) error {
	return WriteJSON(filepath.Join(dir, string(f)), v)
}

func (f jsonFile[T]) read(dir string) (T, error) {
	var v T
	err := ReadJSON(filepath.Join(dir, string(f)), &v)
	return v, err
}

// readOptional reads a file that only some steps have: (nil, nil) when it
// is absent.
func (f jsonFile[T]) readOptional(dir string) (*T, error) {
	v, err := f.read(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

const (
	summaryFile    jsonFile[metrics.Summary] = "summary.json"
	warmupFile     jsonFile[metrics.Summary] = "warmup.json"
	resourcesFile  jsonFile[StepResources]   = "resources.json"
	eventsFile     jsonFile[[]EventRecord]   = "events.json"
	collectedFile  jsonFile[Collected]       = "collected.json"
	startupFile    jsonFile[Startup]         = "startup.json"
	auditFile      jsonFile[Audit]           = "audit.json"
	provenanceFile jsonFile[Provenance]      = "provenance.json"
	resolvedFile   jsonFile[study.Study]     = "study.resolved.json"
	stateFile      jsonFile[State]           = "state.json"

	recordsFile = "records.parquet"
	studyFile   = "study.yaml"
)

// WriteClaims keeps the study's claims file as it was when the run began,
// which its report judges; a study without claims has none.
func (r *Run) WriteClaims(source []byte) error {
	return WriteFile(filepath.Join(r.Dir, claims.FileName), source)
}

// ReadClaims reads the run's claims file: nil when the run has none.
func (r *Run) ReadClaims() (*claims.File, error) {
	f, err := claims.Load(filepath.Join(r.Dir, claims.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// StepDir is the directory of one measured load: a step of a variant in a
// repetition of a run, or the --out directory of msbench load.
type StepDir string

func (d StepDir) WriteSummary(s metrics.Summary) error  { return summaryFile.write(string(d), s) }
func (d StepDir) ReadSummary() (metrics.Summary, error) { return summaryFile.read(string(d)) }
func (d StepDir) WriteWarmup(s metrics.Summary) error   { return warmupFile.write(string(d), s) }
func (d StepDir) WriteResources(r StepResources) error  { return resourcesFile.write(string(d), r) }
func (d StepDir) ReadResources() (StepResources, error) { return resourcesFile.read(string(d)) }
func (d StepDir) WriteEvents(e []EventRecord) error     { return eventsFile.write(string(d), e) }
func (d StepDir) ReadEvents() ([]EventRecord, error)    { return eventsFile.read(string(d)) }
func (d StepDir) WriteCollected(c Collected) error      { return collectedFile.write(string(d), c) }
func (d StepDir) ReadCollected() (Collected, error)     { return collectedFile.read(string(d)) }
func (d StepDir) RecordsPath() string                   { return filepath.Join(string(d), recordsFile) }
func (d StepDir) ReadRecords() ([]records.Row, error)   { return records.Read(d.RecordsPath()) }
func (d StepDir) ReadWarmup() (*metrics.Summary, error) { return warmupFile.readOptional(string(d)) }
func (d StepDir) CountRecords() (int64, error)          { return records.Count(d.RecordsPath()) }
func (d StepDir) WriteAudit(a Audit) error              { return auditFile.write(string(d), a) }

// ReadAudit returns nil for a step measured before msbench audited steps.
func (d StepDir) ReadAudit() (*Audit, error) { return auditFile.readOptional(string(d)) }

// CreateRecords starts the step's records file; see records.Create.
func (d StepDir) CreateRecords(names *metrics.Names, targets []string) (*records.Writer, error) {
	return records.Create(d.RecordsPath(), names, targets)
}

// Check verifies that the step's summary and records agree, the cheap way
// to notice a damaged or half-copied step.
func (d StepDir) Check(s metrics.Summary) error {
	rows, err := d.CountRecords()
	if err != nil {
		return err
	}
	if rows != s.Requests {
		return fmt.Errorf("%s: records.parquet holds %d requests, summary.json counts %d: one of them is damaged", d, rows, s.Requests)
	}
	return nil
}

// VariantDir holds what one variant's deployment in one repetition
// measured apart from its steps.
type VariantDir string

func (d VariantDir) WriteStartup(s Startup) error { return startupFile.write(string(d), s) }

// ReadStartup returns nil when the variant never got as far as recording
// its start-up.
func (d VariantDir) ReadStartup() (*Startup, error) { return startupFile.readOptional(string(d)) }

// WriteProvenance records where and how the run was made.
func (r *Run) WriteProvenance(p Provenance) error { return provenanceFile.write(r.Dir, p) }

// ReadProvenance reads it back.
func (r *Run) ReadProvenance() (Provenance, error) { return provenanceFile.read(r.Dir) }

// WriteStudy keeps the study file as it was read and the study as run
// (profile applied, defaults filled in), which is what reports read: an
// old run's report never depends on today's study grammar.
func (r *Run) WriteStudy(source []byte, s *study.Study) error {
	if source != nil {
		if err := WriteFile(filepath.Join(r.Dir, studyFile), source); err != nil {
			return err
		}
	}
	return resolvedFile.write(r.Dir, *s)
}

// ReadStudy reads the study as run.
func (r *Run) ReadStudy() (*study.Study, error) {
	s, err := resolvedFile.read(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("the run's study: %w", err)
	}
	return &s, nil
}

// ReportHTML and ReportMarkdown are where a run's report goes.
func ReportHTML(runDir string) string     { return filepath.Join(runDir, "report.html") }
func ReportMarkdown(runDir string) string { return filepath.Join(runDir, "report.md") }
