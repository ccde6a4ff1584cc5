package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics/summarymetric"
	"github.com/msbench/msbench/internal/stats"
)

// noise is what the run's A/A twin says of this machine's run-to-run
// noise: the model one-run verdicts take their interval from, and the
// section that shows it.
type noise struct {
	model   claims.Noise
	section analysis.Section
}

// kindFigure is a figure of a unit the noise model is estimated on, for
// one kind of claims metric, with what it is in words.
type kindFigure struct {
	kind  claims.Kind
	words string
	of    func(u *analysis.Unit) float64
}

// pair is an A/A pair's figure, the twin's and the base's; false unless
// both are positive and finite, as a ratio's logs need.
func (k kindFigure) pair(p analysis.AAPair) (twin, base float64, ok bool) {
	twin, base = k.of(p.Twin), k.of(p.Base)
	return twin, base, twin > 0 && base > 0 && !math.IsInf(twin, 0) && !math.IsInf(base, 0)
}

var kindFigures = []kindFigure{
	{claims.Latency, "median latency (p50)", analysis.Of(summarymetric.P50)},
	{claims.Tail, "tail latency (p99)", analysis.Of(summarymetric.P99)},
	{claims.Throughput, "throughput", analysis.Of(summarymetric.Throughput)},
	{claims.CPU, "CPU time of the services", cpuSeconds},
	{claims.Memory, "peak memory of the services", func(u *analysis.Unit) float64 { return float64(peakMemory(u)) }},
}

// noiseModel estimates the noise model from the run's A/A pair: one
// variant deployed twice per repetition, independently. Identical systems
// differ only by the machine's noise and the luck of a deployment, so
// the spread of their log ratio, pooled over steps and repetitions, is
// the run-to-run spread of one deployment's value (stats.LogSpread).
// Only units that passed their noise audit count, as for the verdicts.
func noiseModel(ds *analysis.Dataset) noise {
	sec := analysis.Section{Title: "Noise model: the same system twice (A/A)"}
	aa, ok := ds.AAPairs()
	if !ok {
		sec.Text = append(sec.Text, "This run has no A/A pair (the study says aa: none), so this machine's run-to-run noise is not known here: a claim measured in one run gets no interval and no decisive verdict.")
		if t, ok := sliceSpread(ds); ok {
			sec.Tables = append(sec.Tables, t)
		}
		return noise{section: sec}
	}
	perStep := analysis.Table{
		Caption: fmt.Sprintf("%s deployed twice in each repetition (the second as %s): the second's figure over the first's, geometric mean over the repetitions whose two steps both passed the noise audit, with its 95%% interval.", aa.Base.Key(), aa.Twin.Key()),
		Header:  []string{"step", "pairs", "p50 ratio", "p99 ratio", "throughput ratio"},
	}
	for _, st := range ds.Study.Load.Steps {
		row := []string{st.Name, ""}
		for i, k := range kindFigures {
			var ratios []float64
			for _, p := range aa.Pairs {
				if x, y, ok := k.pair(p); ok && p.Step == st.Name {
					ratios = append(ratios, x/y)
				}
			}
			if i == 0 {
				row[1] = fmt.Sprint(len(ratios))
			}
			if i < 3 { // the per-step table shows the load's own figures
				row = append(row, ratioCell(ratios))
			}
		}
		perStep.Rows = append(perStep.Rows, row)
	}
	model := claims.Noise{}
	pooled := analysis.Table{
		Caption: "Per kind of figure, pooled over every step and repetition: σ̂, the run-to-run standard deviation of one deployment's log value (σ̂² = Σ log(a/b)² / 2n over n A/A pairs), with its 95% χ² interval. The steps of one repetition share its two deployments, so their pairs are not independent: the degrees of freedom are Satterthwaite's, between the number of repetitions (when a deployment's luck is all the noise) and of pairs (when each step's own noise is). The A/A ratio should be 1: geometric mean over the repetitions of each one's ratio, with its 95% interval (none from one repetition, where a deployment's luck and a bias look alike).",
		Header:  []string{"figure", "claims kind", "A/A pairs", "σ̂ per deployment (95% interval)", "A/A ratio (95% interval)", "contains 1"},
	}
	var biased []string
	reps := aa.Repetitions()
	for _, k := range kindFigures {
		// The spread takes the pairs of a repetition together (they share
		// its deployments), and whether the A/A ratio departs from 1 is
		// judged over repetitions, each one's ratio over its steps: the
		// repetitions are independent, the steps of one are not.
		var groups [][][2]float64
		var perRep []float64
		npairs := 0
		for _, rep := range reps {
			var g [][2]float64
			var ratios []float64
			for _, p := range rep {
				if x, y, ok := k.pair(p); ok {
					g = append(g, [2]float64{x, y})
					ratios = append(ratios, x/y)
				}
			}
			if len(g) > 0 {
				gm, _, _ := stats.GeoMeanCI(ratios, 0.95)
				groups, perRep, npairs = append(groups, g), append(perRep, gm), npairs+len(g)
			}
		}
		if npairs == 0 {
			pooled.Rows = append(pooled.Rows, []string{k.words, string(k.kind), "0", "–", "–", "–"})
			continue
		}
		s := stats.LogSpread(groups)
		model[k.kind] = s
		gm, lo, hi := stats.GeoMeanCI(perRep, 0.95)
		contains := "–"
		switch {
		case math.IsNaN(lo):
		case lo <= 1 && hi >= 1:
			contains = "yes"
		default:
			contains = "NO"
			biased = append(biased, fmt.Sprintf("%s (the second deployment at %.3f× the first, 95%% interval %.3f–%.3f)", k.words, gm, lo, hi))
		}
		pooled.Rows = append(pooled.Rows, []string{k.words, string(k.kind), fmt.Sprintf("%d in %d repetition(s), %d degrees of freedom", npairs, len(groups), s.DF),
			fmt.Sprintf("%s (%s–%s)", analysis.Pct(s.Sigma), analysis.Pct(s.Lo), analysis.Pct(s.Hi)), ratioCell(perRep), contains})
	}
	sec.Tables = append(sec.Tables, pooled, perStep)
	if t, ok := sliceSpread(ds); ok {
		sec.Tables = append(sec.Tables, t)
	}
	if aa.Failed > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("A/A pairs left out because a side failed its noise audit: %d (the verdicts do not read such units either).", aa.Failed))
	}
	if len(model) == 0 {
		sec.Text = append(sec.Text, "The A/A pair was not measured in this run (or none of its steps passed the noise audit), so this machine's run-to-run noise is not known here: a claim measured in one run gets no interval and no decisive verdict.")
		return noise{section: sec}
	}
	sec.Text = append(sec.Text, "Two deployments of the same system differ only by the machine's noise and the luck of a deployment. How far they came apart is the noise model: per kind of figure, σ̂, the run-to-run spread of one deployment's value, from the steps that passed the noise audit. "+
		"A claim measured in one run takes its interval from it, provisionally: the value × exp(±t·σ̂·√2) for a ratio of two deployments and × exp(±t·σ̂) for one system's figure, t with the noise model's degrees of freedom. "+
		"With two runs or more the interval comes from the runs themselves, which already vary by this noise; the model adds nothing to them, and no claim's edge is ever moved by it.")
	if len(biased) > 0 {
		sec.Text = append(sec.Text, "⚠ THE DESIGN IS BIASED: two deployments of the same system should measure alike on average, but here they do not, beyond chance: "+strings.Join(biased, "; ")+
			". Something other than the system differs between the first and second deployment (order, placement, warm caches); differences between variants of this size may be that, not the systems.")
	}
	return noise{model: model, section: sec}
}

// ratioCell is the geometric mean of ratios with its 95% interval.
func ratioCell(ratios []float64) string {
	if len(ratios) == 0 {
		return "–"
	}
	gm, lo, hi := stats.GeoMeanCI(ratios, 0.95)
	cell := fmt.Sprintf("%.3f", gm)
	if !math.IsNaN(lo) {
		cell += fmt.Sprintf(" (%.3f–%.3f)", lo, hi)
	}
	return cell
}
