// Package compare sets two benchmark results side by side, BASE and NEW,
// and says for each step and variant they share whether NEW is faster,
// slower or the same within noise, with a confidence interval that comes
// from the runs when there are several (the run is the unit of
// replication) and from a block bootstrap over time within the run when
// there is one. It is what msbench compare prints.
//
// # Figures are data
//
// What is compared are the figures of summarymetric.All, each a
// descriptor: compare reads a figure's unit, the way it gets worse and how
// its change is taken (NEW/BASE or NEW − BASE) from there, and never
// branches on a figure's name, so a figure added to the table is
// compared, bootstrapped from records, gated by --fail-if and printed with
// no edit here. What compare keeps is what depends on a kind, not on a
// figure: the statistics of each kind of change (byChange), the syntax of
// a rule for each direction (ruleSyntax) and the printing of each unit.
// Records are read through internal/records' projection (records.Outcome),
// the one declaration of the file's schema.
package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
)

// UsageError marks a mistake in what compare was asked: a directory that
// holds no results, nothing in common, a malformed rule.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Kinds of Source.
const (
	KindRun   = "run"   // a directory of msbench run (state.json)
	KindLoad  = "load"  // a directory of msbench load --out (summary.json, records.parquet)
	KindLoads = "loads" // a directory of several msbench load --out directories, each one run
)

// Source is one side of a comparison: a run directory or a load directory
// read back.
type Source struct {
	Dir   string
	Kind  string
	Cells []*Cell
	// Notes say what the directory lacks (unmeasured or damaged units).
	Notes []string
}

// Cell is everything one side measured of one step of one variant: one
// unit per repetition. A load directory, or a directory of several, has
// one cell with empty Step and Variant (one unit per load).
type Cell struct {
	Step    string
	Variant string
	Units   []Unit
}

// Unit is one measured load.
type Unit struct {
	Rep     int
	Dir     results.StepDir
	Summary metrics.Summary
}

// Label names the cell in output: "load" for a load directory.
func (c *Cell) Label() string {
	switch {
	case c.Step == "" && c.Variant == "":
		return "load"
	case c.Variant == "":
		return c.Step
	}
	return c.Step + " " + c.Variant
}

// Open reads a run directory (through analysis.Load), a load directory
// (through results.StepDir), or a directory whose subdirectories are load
// directories, each one run of the same system, in name order (so that a
// CI job can repeat a load and compare the repetitions). A directory that
// is none of these is a UsageError; a damaged one is an ordinary error.
func Open(dir string) (*Source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, usagef("%s: %v", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, usagef("%s is not a directory", dir)
	}
	if results.Check(dir) == nil {
		return openRun(dir)
	}
	u, err := openLoad(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, err
		}
		return &Source{Dir: dir, Kind: KindLoad, Cells: []*Cell{{Units: []Unit{u}}}}, nil
	}
	return openLoads(dir)
}

// openLoad reads one directory of msbench load --out as a unit; an error
// wrapping fs.ErrNotExist when it is not one.
func openLoad(dir string) (Unit, error) {
	step := results.StepDir(dir)
	_, recErr := os.Stat(step.RecordsPath())
	s, err := step.ReadSummary()
	switch {
	case err != nil:
		return Unit{}, err
	case recErr != nil:
		return Unit{}, recErr
	}
	return Unit{Rep: 1, Dir: step, Summary: s}, step.Check(s)
}

// openLoads reads the load directories directly under dir, one run each;
// subdirectories without a summary.json (logs, anything else) are passed
// over.
func openLoads(dir string) (*Source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	c := &Cell{}
	for _, e := range entries { // ReadDir sorts by name
		if !e.IsDir() {
			continue
		}
		u, err := openLoad(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		u.Rep = len(c.Units) + 1
		c.Units = append(c.Units, u)
	}
	if len(c.Units) == 0 {
		return nil, usagef("%s is neither a run directory of msbench run (state.json), nor a directory of msbench load --out (summary.json and records.parquet), nor a directory of several", dir)
	}
	return &Source{Dir: dir, Kind: KindLoads, Cells: []*Cell{c}}, nil
}

func openRun(dir string) (*Source, error) {
	ds, err := analysis.Load(dir)
	if err != nil {
		return nil, err
	}
	src := &Source{Dir: dir, Kind: KindRun, Notes: slices.Clone(ds.Missing)}
	for _, st := range ds.Study.Load.Steps {
		for _, v := range ds.Variants {
			units := ds.Units(v.Key(), st.Name)
			if len(units) == 0 {
				continue
			}
			c := &Cell{Step: st.Name, Variant: v.Key()}
			for _, u := range units {
				c.Units = append(c.Units, Unit{Rep: u.Rep, Dir: u.Dir, Summary: u.Summary})
			}
			src.Cells = append(src.Cells, c)
		}
	}
	return src, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pair is a cell both sides measured.
type pair struct{ base, new *Cell }

// match pairs the cells of base and new by step and variant. When nothing
// matches by name and a side holds loads (its one cell has no step or
// variant) while the other side also has a single cell, the two are
// compared.
func match(base, new *Source) ([]pair, error) {
	var out []pair
	for _, b := range base.Cells {
		for _, n := range new.Cells {
			if b.Step == n.Step && b.Variant == n.Variant {
				out = append(out, pair{b, n})
			}
		}
	}
	if len(out) == 0 && len(base.Cells) == 1 && len(new.Cells) == 1 && (base.Kind != KindRun || new.Kind != KindRun) {
		out = append(out, pair{base.Cells[0], new.Cells[0]})
	}
	if len(out) == 0 {
		return nil, usagef("%s and %s have nothing in common: no step of a variant measured in both (%s: %s; %s: %s)",
			base.Dir, new.Dir, filepath.Base(base.Dir), cellList(base), filepath.Base(new.Dir), cellList(new))
	}
	return out, nil
}

func cellList(s *Source) string {
	if len(s.Cells) == 0 {
		return "nothing measured"
	}
	var labels []string
	for i, c := range s.Cells {
		if i == 4 {
			labels = append(labels, fmt.Sprintf("… %d more", len(s.Cells)-4))
			break
		}
		labels = append(labels, c.Label())
	}
	return fmt.Sprint(labels)
}
