package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// Dataset is a run directory read back: the study as it was run and every
// measured unit.
type Dataset struct {
	Dir      string
	Study    *study.Study
	Prov     results.Provenance
	State    results.State
	Variants []study.Variant
	// Missing lists, in words, every planned unit the run has no usable
	// data for: never measured (interrupted, or its variant failed), or
	// with a file missing or damaged. The report shows what it can and
	// gives no verdict that would compare across a gap.
	Missing []string
	units   map[[2]string][]*Unit // (variant key, step) → repetitions
	run     *results.Run
}

// Unit is one measured step of one variant in one repetition.
type Unit struct {
	Rep       int
	Variant   study.Variant
	Step      string
	Dir       results.StepDir
	Summary   metrics.Summary
	Warmup    *metrics.Summary
	Resources results.StepResources
}

// Load reads a run directory.
func Load(dir string) (*Dataset, error) {
	if err := results.Check(dir); err != nil {
		return nil, err
	}
	run, err := results.Open(dir)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Dir: dir, State: run.State(), units: map[[2]string][]*Unit{}, run: run}
	if ds.Prov, err = run.ReadProvenance(); err != nil {
		return nil, err
	}
	s, err := run.ReadStudy()
	if err != nil {
		return nil, err
	}
	ds.Study = s
	ds.Variants = s.Matrix()
	for rep := 1; rep <= s.Repetitions; rep++ {
		for _, v := range ds.Variants {
			var unmeasured []string
			for _, st := range s.Load.Steps {
				if !run.IsDone(results.UnitKey(rep, v.Key(), st.Name)) {
					unmeasured = append(unmeasured, st.Name)
					continue
				}
				u, err := loadUnit(run.StepDir(rep, v.Key(), st.Name), rep, v, st.Name)
				if err != nil {
					ds.Missing = append(ds.Missing, relErr(dir, err))
					continue
				}
				k := [2]string{v.Key(), st.Name}
				ds.units[k] = append(ds.units[k], u)
			}
			if len(unmeasured) > 0 {
				why := ""
				if f, ok := ds.State.Failed[fmt.Sprintf("rep-%d/%s", rep, v.Key())]; ok {
					why = " (the variant failed: " + f + ")"
				}
				ds.Missing = append(ds.Missing, fmt.Sprintf("repetition %d, variant %s: %s not measured%s",
					rep, v.Key(), strings.Join(unmeasured, ", "), why))
			}
		}
	}
	return ds, nil
}

// relErr shortens the run directory out of an error message.
func relErr(dir string, err error) string {
	return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
}

func loadUnit(dir results.StepDir, rep int, v study.Variant, step string) (*Unit, error) {
	u := &Unit{Rep: rep, Variant: v, Step: step, Dir: dir}
	var err error
	if u.Summary, err = dir.ReadSummary(); err != nil {
		return nil, err
	}
	if u.Resources, err = dir.ReadResources(); err != nil {
		return nil, err
	}
	if u.Warmup, err = dir.ReadWarmup(); err != nil {
		return nil, err
	}
	// The records are read only by some analyses; a damaged file must not
	// go unnoticed by the others.
	return u, dir.Check(u.Summary)
}

// Units returns the repetitions of one step of one variant.
func (ds *Dataset) Units(variant, step string) []*Unit { return ds.units[[2]string{variant, step}] }

// Merged returns one histogram of every repetition of a step of a
// variant: name is "latency", "uncorrected" or "server_timing.METRIC".
func (ds *Dataset) Merged(variant, step, name string) (*hdrhistogram.Histogram, error) {
	var merged *hdrhistogram.Histogram
	for _, u := range ds.Units(variant, step) {
		enc, ok := u.Summary.Histograms[name]
		if !ok || enc == "" {
			continue
		}
		h, err := metrics.DecodeHistogram(enc)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", u.Dir, name, err)
		}
		if merged == nil {
			merged = h
		} else {
			merged.Merge(h)
		}
	}
	return merged, nil
}

// Axis returns the variants' values on the first axis and the keys of the
// remaining axes, the shape of most charts: groups by the first axis, one
// series per combination of the rest.
func (ds *Dataset) Axis() (groups []string, series []string) {
	if len(ds.Study.Variants) == 0 {
		return []string{"default"}, []string{""}
	}
	groups = ds.Study.Variants[0].Values
	seen := map[string]bool{}
	for _, v := range ds.Variants {
		k := rest(v)
		if !seen[k] {
			seen[k] = true
			series = append(series, k)
		}
	}
	return groups, series
}

// variantFor finds the variant with first-axis value g and remaining key r.
func (ds *Dataset) variantFor(g, r string) (study.Variant, bool) {
	for _, v := range ds.Variants {
		first := "default"
		if len(v.Values) > 0 {
			first = v.Values[0][1]
		}
		if first == g && rest(v) == r {
			return v, true
		}
	}
	return study.Variant{}, false
}

func rest(v study.Variant) string {
	if len(v.Values) <= 1 {
		return ""
	}
	return study.Variant{Values: v.Values[1:]}.Key()
}
