package compare

import (
	"fmt"
	"math"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"
)

// Noise is a run-to-run noise model: how far two deployments of the same
// system come apart on this machine, metric by metric, measured on A/A
// runs (--noise DIR). It gives a comparison with one run a side the
// interval that repetitions would otherwise give.
type Noise struct {
	Dir  string `json:"dir"`
	Kind string `json:"kind"` // run (its A/A twin) or loads
	// Pairs is the number of A/A pairs; each metric's DF is at most that.
	Pairs   int           `json:"pairs"`
	Spreads []NoiseSpread `json:"spreads"` // in summarymetric.All's order
	Notes   []string      `json:"notes,omitempty"`
}

// NoiseSpread is one metric's run-to-run spread: the standard deviation
// of its log between deployments (Scale "log", for the metrics compared by
// ratio), or of its value (Scale "value", for errors, compared by
// difference), with the 95% χ² interval of that spread and its degrees of
// freedom.
type NoiseSpread struct {
	Metric string `json:"metric"`
	Scale  string `json:"scale"`
	Sigma  Num    `json:"sigma"`
	Lo     Num    `json:"sigma_lo"`
	Hi     Num    `json:"sigma_hi"`
	DF     int    `json:"df"`
}

// OpenNoise reads a noise model from A/A runs: a run directory whose
// study deploys an A/A twin (pairs: the twin and its variant in the same
// repetition and step, both passing the noise audit), or a directory of
// several msbench load --out directories of the same system (pairs: the
// first and second in name order, the third and fourth, and so on; an
// odd last one is left out). Consecutive pairs, rather than every run
// against the mean of all, keep each pair independent. A run's pairs of
// one repetition are not: its steps share the same two deployments, so
// they are grouped (stats.LogSpread).
func OpenNoise(dir string) (*Noise, error) {
	src, err := Open(dir)
	if err != nil {
		return nil, err
	}
	switch src.Kind {
	case KindRun:
		return twinNoise(dir)
	case KindLoads:
		units := src.Cells[0].Units
		var pairs [][][2]metrics.Summary
		for i := 0; i+1 < len(units); i += 2 {
			pairs = append(pairs, [][2]metrics.Summary{{units[i].Summary, units[i+1].Summary}})
		}
		var notes []string
		if len(units)%2 == 1 {
			notes = append(notes, fmt.Sprintf("%d loads: the last is left out, pairs being consecutive", len(units)))
		}
		if len(pairs) == 0 {
			return nil, usagef("--noise %s holds one load: a noise model needs A/A runs, at least two loads of the same system", dir)
		}
		return newNoise(dir, KindLoads, pairs, notes), nil
	}
	return nil, usagef("--noise %s is a single load: a noise model needs A/A runs, a directory of several loads of the same system or a run with an A/A twin", dir)
}

// twinNoise reads the A/A pairs of a run's twin, audited as the report's
// noise model reads them (analysis.Dataset.AAPairs).
func twinNoise(dir string) (*Noise, error) {
	ds, err := analysis.Load(dir)
	if err != nil {
		return nil, err
	}
	aa, ok := ds.AAPairs()
	if !ok {
		return nil, usagef("--noise %s: the run has no A/A twin (its study says aa: none), so it measured no run-to-run noise", dir)
	}
	var pairs [][][2]metrics.Summary
	for _, rep := range aa.Repetitions() {
		g := make([][2]metrics.Summary, len(rep))
		for i, p := range rep {
			g[i] = [2]metrics.Summary{p.Base.Summary, p.Twin.Summary}
		}
		pairs = append(pairs, g)
	}
	var notes []string
	if aa.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%d A/A pair%s left out: a side failed the noise audit", aa.Failed, plural(aa.Failed)))
	}
	if len(pairs) == 0 {
		return nil, usagef("--noise %s: no A/A pair of %s and its twin measured and audited", dir, aa.Base.Key())
	}
	return newNoise(dir, KindRun, pairs, notes), nil
}

// newNoise pools the pairs over steps and repetitions, one spread per
// metric: the steps differ in level, not (much) in how far deployments
// come apart, and pooling gives the spread the degrees of freedom a
// single step lacks. groups holds the pairs that share deployments.
func newNoise(dir, kind string, groups [][][2]metrics.Summary, notes []string) *Noise {
	n := &Noise{Dir: dir, Kind: kind, Notes: notes}
	for _, g := range groups {
		n.Pairs += len(g)
	}
	for _, d := range summarymetric.All {
		vs := make([][][2]float64, len(groups))
		for i, g := range groups {
			for _, p := range g {
				a, b := d.Of(p[0]), d.Of(p[1])
				if !math.IsNaN(a) && !math.IsNaN(b) {
					vs[i] = append(vs[i], [2]float64{a, b})
				}
			}
		}
		cs := byChange[d.Change]
		s := cs.pairs(vs)
		n.Spreads = append(n.Spreads, NoiseSpread{Metric: d.Name, Scale: cs.scaleName, Sigma: Num(s.Sigma), Lo: Num(s.Lo), Hi: Num(s.Hi), DF: s.DF})
	}
	return n
}

// spread is one figure's spread; NaN when the model lacks it.
func (n *Noise) spread(d summarymetric.Descriptor) stats.Spread {
	for _, s := range n.Spreads {
		if s.Metric == d.Name {
			return stats.Spread{Sigma: float64(s.Sigma), Lo: float64(s.Lo), Hi: float64(s.Hi), DF: s.DF}
		}
	}
	return stats.Spread{Sigma: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}
