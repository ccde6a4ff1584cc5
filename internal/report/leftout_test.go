package report

import (
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// A claim that is not measured because every step it reads failed the
// noise audit says so in words, with the cause and its figure; the units
// left out are a table of causes and a folded list, not a wall of text.
func TestLeftOutSaysWhyInWords(t *testing.T) {
	analysis.Register("left-out-words", countRuns{})
	s := &study.Study{Name: "left-out-words", Repetitions: 3, Load: study.Plan{Steps: []*study.Step{{Name: "s"}, {Name: "t"}}}}
	v := s.Matrix()[0]
	var units []*analysis.Unit
	for rep := 1; rep <= 3; rep++ {
		foreign := 0.2 + 0.12*float64(rep) // up to 56%
		units = append(units,
			&analysis.Unit{Rep: rep, Variant: v, Step: "s", Summary: metrics.Summary{Latency: metrics.Distribution{P50: 1}},
				Audit: &results.Audit{Reasons: []string{"processes outside the run used some of the machine's CPU"}, ForeignShare: foreign}},
			&analysis.Unit{Rep: rep, Variant: v, Step: "t", Summary: metrics.Summary{Latency: metrics.Distribution{P50: 1}}})
	}
	units[5].Audit = &results.Audit{Reasons: []string{"the hypervisor stole 7.0% of the machine's CPU time (over 5%)", "a reason of no known cause"}, StealShare: 0.07}
	ds := analysis.NewDataset(s, units)
	below := 2.0
	ds.Claims = &claims.File{Claims: []claims.Claim{{ID: "fast", Text: "fast", Metric: "p50", Expect: claims.Expect{Below: &below}}}}
	sections, judged := studySections(ds, Options{})
	if len(judged) != 1 || judged[0].Verdict != claims.NotMeasured ||
		!strings.HasPrefix(judged[0].Why, "every step it reads failed the noise audit: other processes used up to 56.0% of the machine's CPU (3 of the 4 units left out)") {
		t.Fatalf("judged %+v", judged)
	}
	var sec analysis.Section
	for _, x := range sections {
		if x.Title == "Claims and verdicts" {
			sec = x
		}
	}
	want := [][]string{
		{"other processes used up to 56.0% of the machine's CPU", "3", "56.0%"},
		{"the hypervisor stole up to 7.0% of the CPU time", "1", "7.0%"},
		{"a reason of no known cause", "1", "–"},
	}
	if len(sec.Tables) != 1 || len(sec.Tables[0].Rows) != len(want) {
		t.Fatalf("causes %+v", sec.Tables)
	}
	for i, row := range want {
		if strings.Join(sec.Tables[0].Rows[i], "|") != strings.Join(row, "|") {
			t.Errorf("cause row %d: %q, want %q", i, sec.Tables[0].Rows[i], row)
		}
	}
	if len(sec.Details) != 1 || len(sec.Details[0].Items) != 4 || sec.Details[0].Items[0] != "default s (repetition 1)" {
		t.Fatalf("details %+v", sec.Details)
	}
	html := string(renderHTML(ds, []analysis.Section{sec}))
	if !strings.Contains(html, "<details><summary>The 4 units left out</summary><ul><li>default s (repetition 1)</li>") {
		t.Errorf("the left-out units are not a folded list:\n%s", html)
	}
}
