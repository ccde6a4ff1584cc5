// Package analysis is how a study adds its own part to its report: the
// published claims beside what was measured, and the plots that answer its
// question. A study's analysis lives in its own folder
// (studies/NAME/analysis) and registers itself, in the manner of
// database/sql drivers or caddy modules:
//
//	func init() { analysis.Register("cache", cacheAnalysis{}) }
//
// It declares what it reads (Needs): the study file is checked against
// that when it is loaded, so a renamed step or a missing axis is an error
// with file, line and field before anything runs, and the report of an
// old run that lacks it says what could not be computed. It then gets a
// typed Dataset: the steps with their parameters, the variants with their
// axis values, and every measured unit's summary, records, resources,
// events and start-up. Nothing in an analysis reads a step's name to learn
// a parameter.
package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/study"
)

// Analysis is a study's own part of its report.
type Analysis interface {
	// Needs says which steps (by their parameters) and axes it reads.
	Needs() study.Needs
	// Analyze computes its sections and its claims' metrics from a run.
	Analyze(ds *Dataset) (Result, error)
}

var registry = struct {
	sync.Mutex
	m map[string]Analysis
}{m: map[string]Analysis{}}

// Register makes a the analysis of the study named study. It is called
// from an init function; registering a study twice is a programming error
// that stops msbench at start, as with database/sql.Register.
func Register(studyName string, a Analysis) {
	registry.Lock()
	defer registry.Unlock()
	if a == nil {
		panic("analysis: Register of a nil analysis for " + studyName)
	}
	if _, dup := registry.m[studyName]; dup {
		panic(fmt.Sprintf("analysis: Register called twice for study %q", studyName))
	}
	registry.m[studyName] = a
}

// Lookup returns the analysis of a study.
func Lookup(studyName string) (Analysis, bool) {
	registry.Lock()
	defer registry.Unlock()
	a, ok := registry.m[studyName]
	return a, ok
}

// Registered lists the studies that have an analysis, sorted.
func Registered() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Check verifies a study against its analysis' needs, and its claims file
// (claims.yaml beside the study file), if it has one, against the metrics
// the analysis measures.
func Check(s *study.Study) error {
	var needs study.Needs
	if a, ok := Lookup(s.Name); ok {
		needs = a.Needs()
	}
	if err := s.Check(needs); err != nil {
		return err
	}
	path := filepath.Join(filepath.Dir(s.File), claims.FileName)
	f, err := claims.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.CheckMetrics(path, needs.Metrics)
}
