package analysis

import (
	"math"
	"strings"

	"github.com/msbench/msbench/internal/stats"
)

// GeoMeanByRep is, repetition by repetition, the geometric mean of a
// ratio over cases (steps, endpoints, numbers of users): ratios holds each
// case's ratio by repetition, cases their order. Every repetition's mean
// is over the same cases: those measured, with a positive finite ratio, in
// every repetition that measured any (kept). A case missing from one such
// repetition, or from all, is left out of every repetition's mean (lost):
// with it in some means and not others, one repetition's value would
// weigh the cases otherwise than another's, a value of another quantity,
// and the spread between repetitions would be the cases' as much as the
// deployments'.
func GeoMeanByRep(cases []string, ratios map[string]map[int]float64) (byRep map[int]float64, kept, lost []string) {
	valid := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	reps := map[int]bool{}
	for _, c := range cases {
		for rep, x := range ratios[c] {
			if valid(x) {
				reps[rep] = true
			}
		}
	}
	for _, c := range cases {
		everywhere := len(reps) > 0
		for rep := range reps {
			if !valid(ratios[c][rep]) {
				everywhere = false
			}
		}
		if everywhere {
			kept = append(kept, c)
		} else {
			lost = append(lost, c)
		}
	}
	byRep = map[int]float64{}
	if len(kept) == 0 {
		return byRep, kept, lost
	}
	for rep := range reps {
		logs := make([]float64, len(kept))
		for i, c := range kept {
			logs[i] = math.Log(ratios[c][rep])
		}
		byRep[rep] = math.Exp(stats.Mean(logs))
	}
	return byRep, kept, lost
}

// LeftOut is what a claim's note adds for the cases GeoMeanByRep left
// out, "" when none were.
func LeftOut(lost []string) string {
	if len(lost) == 0 {
		return ""
	}
	return "; left out, as not measured in every repetition (a step that failed its noise audit): " + strings.Join(lost, "; ")
}
