package analysis

import (
	"cmp"
	"maps"
	"slices"

	"github.com/msbench/msbench/internal/study"
)

// AA is a run's A/A pair: one variant of the study deployed twice in each
// repetition (its aa: field), independently. Two deployments of the same
// system differ only by the machine's noise and a deployment's luck, so
// the report's noise model and compare --noise both read the run-to-run
// spread from these pairs, and from the same ones.
type AA struct {
	Base, Twin study.Variant
	// Pairs are the base's and the twin's units of the same step and
	// repetition, both passing their noise audit (verdicts read no other
	// unit, nor may the model they take their interval from), in the
	// study's step order, then by repetition.
	Pairs []AAPair
	// Failed counts the pairs left out because a side failed its audit.
	Failed int
}

// AAPair is one step of one repetition, measured on both deployments.
type AAPair struct {
	Step       string
	Base, Twin *Unit
}

// AAPairs finds the run's A/A pairs; false when the study deploys no twin
// (aa: none).
func (ds *Dataset) AAPairs() (AA, bool) {
	twin, ok := ds.Study.Twin()
	if !ok {
		return AA{}, false
	}
	base := twin
	base.Twin = false
	aa := AA{Base: base, Twin: twin}
	for _, st := range ds.Study.Load.Steps {
		byRep := map[int]*Unit{}
		for _, u := range ds.Units(base.Key(), st.Name) {
			byRep[u.Rep] = u
		}
		twins := slices.SortedFunc(slices.Values(ds.Units(twin.Key(), st.Name)), func(a, b *Unit) int { return cmp.Compare(a.Rep, b.Rep) })
		for _, t := range twins {
			b, ok := byRep[t.Rep]
			switch {
			case !ok:
			case !b.AuditOK() || !t.AuditOK():
				aa.Failed++
			default:
				aa.Pairs = append(aa.Pairs, AAPair{Step: st.Name, Base: b, Twin: t})
			}
		}
	}
	return aa, true
}

// Repetitions groups the pairs by repetition, in repetition order, each in
// the study's step order: the pairs of one repetition were measured on the
// same two deployments, so they share those deployments' luck and are not
// independent (stats.LogSpread takes them so).
func (aa AA) Repetitions() [][]AAPair {
	reps := map[int][]AAPair{}
	for _, p := range aa.Pairs {
		reps[p.Base.Rep] = append(reps[p.Base.Rep], p)
	}
	out := make([][]AAPair, 0, len(reps))
	for _, r := range slices.Sorted(maps.Keys(reps)) {
		out = append(out, reps[r])
	}
	return out
}
