package analysis

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/stats"
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
	// Claims are the study's published claims as the run kept them; nil
	// when it has none.
	Claims *claims.File
	units  map[[2]string][]*Unit // (variant key, step) → repetitions
	run    *results.Run
	// written is the study file as the run kept it, without its profile
	// (SkippedByProfile), once read; writtenErr why it could not be.
	written    *study.Study
	writtenErr error
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
	// Audit is the step's noise audit: whether it measured the system and
	// not the lab's own contention (a saturated generator, steal, other
	// processes). Nil for a step measured before msbench audited steps.
	Audit *results.Audit
	// Slices are the turns an interleaved step took; nil for one measured
	// in one piece.
	Slices *results.Slices
}

// AuditOK reports whether the unit passed its noise audit; a unit measured
// before audits existed counts as passed (nothing says otherwise). A
// verdict leaves out the units that did not pass.
func (u *Unit) AuditOK() bool { return u.Audit == nil || u.Audit.OK }

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
	if ds.Claims, err = run.ReadClaims(); err != nil {
		return nil, err
	}
	ds.Study = s
	ds.Variants = s.Matrix()
	for rep := 1; rep <= s.Repetitions; rep++ {
		for _, v := range s.Runs() { // the A/A twin too
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
	if u.Audit, err = dir.ReadAudit(); err != nil {
		return nil, err
	}
	if u.Slices, err = dir.ReadSlices(); err != nil {
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
func (ds *Dataset) VariantFor(g, r string) (study.Variant, bool) {
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

// Median is the median over repetitions of f for one step of one variant;
// false when nothing was measured.
// Of reads a summary figure from a unit, for Median and the other
// readers of units.
func Of(d summarymetric.Descriptor) func(u *Unit) float64 {
	return func(u *Unit) float64 { return d.Of(u.Summary) }
}

func (ds *Dataset) Median(variant, step string, f func(u *Unit) float64) (float64, bool) {
	units := ds.Units(variant, step)
	if len(units) == 0 {
		return NaN, false
	}
	xs := make([]float64, len(units))
	for i, u := range units {
		xs[i] = f(u)
	}
	return stats.Median(xs), true
}

// AxisValues are the values of a variant axis, in the study file's order.
func (ds *Dataset) AxisValues(axis string) []string {
	for _, a := range ds.Study.Variants {
		if a.Name == axis {
			return a.Values
		}
	}
	return nil
}

// Startup is what a variant's deployment in one repetition recorded about
// its start: nil when it never got that far.
func (ds *Dataset) Startup(rep int, variant string) (*results.Startup, error) {
	if ds.run == nil {
		return nil, nil // a dataset made in memory
	}
	return ds.run.VariantDir(rep, variant).ReadStartup()
}

// Steps lists the steps whose parameters include every pair of where, in
// the study's order: how an analysis finds its data without reading a
// step's name.
func (ds *Dataset) Steps(where map[string]string) []*study.Step {
	var out []*study.Step
	for _, st := range ds.Study.Load.Steps {
		if st.Matches(where) {
			out = append(out, st)
		}
	}
	return out
}

// NewDataset builds a dataset from units in memory, for testing an
// analysis on synthetic data whose answer is known. Units that read files
// (records, events) need Dir set to a step directory holding them.
func NewDataset(s *study.Study, units []*Unit) *Dataset {
	ds := &Dataset{Study: s, Variants: s.Matrix(), units: map[[2]string][]*Unit{}}
	for _, u := range units {
		k := [2]string{u.Variant.Key(), u.Step}
		ds.units[k] = append(ds.units[k], u)
	}
	return ds
}

// Variant finds the variant with the given axis values.
func (ds *Dataset) Variant(values map[string]string) (study.Variant, bool) {
	for _, v := range ds.Variants {
		match := true
		for axis, val := range values {
			if v.Get(axis) != val {
				match = false
				break
			}
		}
		if match {
			return v, true
		}
	}
	return study.Variant{}, false
}

// Unmeasured lists, as "variant step", every variant of the run that has
// no data for one of steps: what a section must say it could not show.
func (ds *Dataset) Unmeasured(steps []*study.Step) []string {
	var out []string
	for _, st := range steps {
		for _, v := range ds.Variants {
			if len(ds.Units(v.Key(), st.Name)) == 0 {
				out = append(out, v.Key()+" "+st.Name)
			}
		}
	}
	return out
}

// NotMeasured is the sentence a section adds for what it could not show;
// "" when everything was measured.
func NotMeasured(what []string) string {
	if len(what) == 0 {
		return ""
	}
	return "Not measured in this run (skipped by the profile, interrupted, or failed; see Missing data): " + strings.Join(what, ", ") + "."
}

// PerRun is f of one step of one variant in each repetition that measured
// it, by repetition: the values a claim's metric is summarised over.
func (ds *Dataset) PerRun(variant, step string, f func(u *Unit) float64) map[int]float64 {
	out := map[int]float64{}
	for _, u := range ds.Units(variant, step) {
		out[u.Rep] = f(u)
	}
	return out
}

// Paired combines, repetition by repetition, two sets of per-run values
// measured side by side (e.g. a/b of two variants in the same run): only
// repetitions that measured both count.
func Paired(a, b map[int]float64, combine func(a, b float64) float64) []float64 {
	var out []float64
	for _, rep := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[rep]; ok {
			out = append(out, combine(a[rep], y))
		}
	}
	return out
}

// Ratio is combine for Paired: a/b.
func Ratio(a, b float64) float64 { return a / b }

// PassedAudits is the dataset without the units whose noise audit failed
// (the generator saturated, CPU stolen or used by others): what verdicts
// are judged on. It also names what it left out, as "variant step
// (repetition N)".
func (ds *Dataset) PassedAudits() (*Dataset, []string) {
	out := *ds
	out.units = map[[2]string][]*Unit{}
	var left []string
	for k, units := range ds.units {
		for _, u := range units {
			if u.AuditOK() {
				out.units[k] = append(out.units[k], u)
			} else {
				left = append(left, fmt.Sprintf("%s %s (repetition %d)", k[0], k[1], u.Rep))
			}
		}
	}
	slices.Sort(left)
	return &out, left
}
