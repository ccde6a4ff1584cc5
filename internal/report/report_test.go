package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/study"
)

// TestReportOfARealRun carries out the runner's tiny study and renders it.
func TestReportOfARealRun(t *testing.T) {
	dir := runTiny(t)
	// As a study with a dataset whose shared file was absent records it.
	run, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := run.ReadProvenance()
	if err != nil {
		t.Fatal(err)
	}
	prov.Datasets = map[string]results.DatasetFile{"places": {Path: "/cache/gen/places.json", Source: results.DatasetGenerated, Bytes: 2048, SHA256: strings.Repeat("ab", 32)}}
	if err := run.WriteProvenance(prov); err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{"<svg", "Step closed", "Step open", "Provenance", "cgroup", "closed: latency"} {
		if !strings.Contains(html, want) && !(want == "cgroup" && strings.Contains(html, "proc")) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched when the page opens.
	for _, bad := range []string{"<script src", "<link", "src=\"http", "href=\"http"} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html refers to the network: %q", bad)
		}
	}
	dec := xml.NewDecoder(strings.NewReader(strings.TrimPrefix(html, "<!DOCTYPE html>\n")))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "| variant | reps |") || !strings.Contains(string(md), "| dataset places | generated: the shared file was absent") {
		t.Fatalf("report.md: %v\n%s", err, md)
	}
	if strings.Contains(html, "Missing data") {
		t.Error("a complete run's report says data is missing")
	}

	// The report of a run whose study lacks what its analysis reads (an
	// old run, before an axis was added) says so instead of an empty part.
	analysis.Register("tiny", needsMore{})
	if path, err = Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(path)
	if !strings.Contains(string(page), "Could not compute the study&#39;s analysis") || !strings.Contains(string(page), "reads the axis &#34;cpu&#34;") {
		t.Error("the report of a run that lacks what its analysis needs does not say so")
	}

	// A damaged run still gets a report, which says what it lacks.
	steps := filepath.Join(dir, "runs", "rep-1", "0")
	if err := os.Remove(filepath.Join(steps, "closed", "summary.json")); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(steps, "open", "records.parquet")
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if path, err = Write(dir, Options{}); err != nil {
		t.Fatalf("a run with a step file removed gets no report: %v", err)
	}
	page, _ = os.ReadFile(path)
	for _, want := range []string{"Missing data", "closed/summary.json", "open/records.parquet", "Provenance"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the damaged run's report lacks %q", want)
		}
	}
}

func TestVerdictsNeedEveryPlannedPart(t *testing.T) {
	sec := analysis.Section{Claims: []claims.Result{
		{Claim: claims.Claim{Text: "A is faster than B"}, Verdict: claims.Reproduced},
		{Claim: claims.Claim{Text: "never measured"}, Verdict: claims.NotMeasured, Why: "no data"},
	}}
	kept := withholdVerdicts(analysis.Section{Claims: slices.Clone(sec.Claims)}, nil)
	if kept.Claims[0].Verdict != claims.Reproduced {
		t.Fatalf("a complete run lost its verdict: %+v", kept.Claims[0])
	}
	got := withholdVerdicts(sec, []string{"repetition 1, variant impl=B: steady not measured"})
	if c := got.Claims[0]; c.Verdict != claims.NotMeasured || !strings.Contains(c.Why, "reproduced") {
		t.Fatalf("a verdict across a gap stood: %+v", c)
	}
	if c := got.Claims[1]; c.Why != "no data" {
		t.Fatalf("an undecided claim's reason was replaced: %+v", c)
	}
}

// needsMore is an analysis of the tiny study that reads an axis the study
// does not have.
type needsMore struct{}

func (needsMore) Needs() study.Needs { return study.Needs{Axes: []string{"cpu"}} }

func (needsMore) Analyze(*analysis.Dataset) (analysis.Result, error) {
	return analysis.Result{}, errors.New("must not be called")
}

// runTiny carries out the runner's tiny study and returns its run directory.
func runTiny(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	s, err := study.Load("../runner/testdata/tiny.yaml", "healthy")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dir, err := runner.Run(context.Background(), s, runner.Options{
		Root: root, ResultsRoot: t.TempDir(), CacheDir: filepath.Join(t.TempDir(), "cache"), DataDir: t.TempDir(), Log: &log,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	return dir
}

// A variant's max is the largest latency of any repetition, so that it is
// never under the p99 beside it, which from 2 to 5 repetitions is a mean.
func TestVariantMaxIsTheLargestOverRepetitions(t *testing.T) {
	var units []*analysis.Unit
	for i, ms := range []float64{100, 1000, 200} {
		u := &analysis.Unit{Rep: i + 1}
		u.Summary.Latency.P99, u.Summary.Latency.Max = 0.9*ms, ms
		units = append(units, u)
	}
	row, _, _ := variantRow("v", units)
	if got := row[8]; got != "1000.000" {
		t.Errorf("max column %q, want 1000.000 (row %q)", got, row)
	}
}
