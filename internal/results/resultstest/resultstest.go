// Package resultstest writes run-directory files from synthetic requests,
// for tests of what reads them (reports, comparisons), as httptest serves
// tests of what calls a server.
package resultstest

import (
	"slices"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
)

// WriteOpenStep writes what an open-model load of recs at rps leaves in
// dir: records.parquet in the order the answers arrived, and summary.json
// from the aggregator the engine uses. It returns the summary.
func WriteOpenStep(t testing.TB, dir results.StepDir, recs []metrics.Record, rps float64) metrics.Summary {
	t.Helper()
	var names metrics.Names
	agg := metrics.NewAggregator(&names)
	agg.Add(recs)
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b metrics.Record) int { return int(a.Done - b.Done) })
	w, err := dir.CreateRecords(&names, []string{"GET /"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(0, slices.MinFunc(recs, func(a, b metrics.Record) int { return int(a.Intended - b.Intended) }).Intended)
	dur := float64(len(recs)) / rps
	s := metrics.Summary{Model: "open", StartedAt: start, EndedAt: start.Add(time.Duration(dur * 1e9)), DurationS: dur,
		TargetRPS: rps, AchievedRPS: rps, AchievedRateOK: true, Valid: true, SuccessRateOK: true, Warnings: []string{}}
	agg.Fill(&s, dur)
	if err := dir.WriteSummary(s); err != nil {
		t.Fatal(err)
	}
	return s
}
