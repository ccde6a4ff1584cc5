package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// A step whose noise audit failed is flagged in its section and in the
// table's audit column; the dataset says which unit failed; the placement
// is in the provenance section.
func TestReportFlagsFailedAudits(t *testing.T) {
	dir := runTiny(t)
	r, _ := results.Open(dir)
	// Whatever this machine's noise was, one step passes and one fails.
	for step, ok := range map[string]bool{"closed": true, "open": false} {
		a, err := r.StepDir(1, "0", step).ReadAudit()
		if err != nil || a == nil {
			t.Fatalf("%s: %v", step, err)
		}
		a.OK, a.Reasons = ok, nil
		if !ok {
			a.Reasons = []string{"the generator was saturated: it used 97% of cores 0 (over 90%)"}
			a.GeneratorCPUUtil, a.GeneratorCPUs = 0.97, "0"
		}
		if err := r.StepDir(1, "0", step).WriteAudit(*a); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u := ds.Units("0", "open"); len(u) != 1 || u[0].AuditOK() || u[0].Audit.Reasons[0] == "" {
		t.Fatalf("open unit audit %+v", u[0].Audit)
	}
	if u := ds.Units("0", "closed"); len(u) != 1 || !u[0].AuditOK() {
		t.Fatalf("closed unit audit %+v", u[0].Audit)
	}
	if _, err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	for _, want := range []string{
		"NOISE AUDIT FAILED, step open, variant 0, repetition 1: the generator was saturated",
		"| warm-up p50 ms | audit |",
		"| FAILED 1 of 1 |",
		"| ok |",
		"CPU placement (default; msbench could use cores",
		"| generator | generator |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Count(text, "NOISE AUDIT FAILED") != 1 {
		t.Errorf("want one failed-audit warning:\n%s", text)
	}
}

// countRuns is an analysis whose one metric is a step's p50 in each run.
type countRuns struct{}

func (countRuns) Needs() study.Needs { return study.Needs{Metrics: []string{"p50"}} }

func (countRuns) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	var xs []float64
	for _, x := range ds.PerRun(ds.Variants[0].Key(), "s", func(u *analysis.Unit) float64 { return u.Summary.Latency.P50 }) {
		xs = append(xs, x)
	}
	return analysis.Result{Metrics: map[string]claims.Metric{"p50": {PerRun: xs}}}, nil
}

// A step whose noise audit failed is shown but left out of the verdicts,
// unless the user asks otherwise.
func TestFailedAuditsAreLeftOutOfVerdicts(t *testing.T) {
	analysis.Register("audit-exclusion", countRuns{})
	s := &study.Study{Name: "audit-exclusion", Repetitions: 3, Load: study.Plan{Steps: []*study.Step{{Name: "s"}}}}
	v := s.Matrix()[0]
	var units []*analysis.Unit
	for rep := 1; rep <= 3; rep++ {
		u := &analysis.Unit{Rep: rep, Variant: v, Step: "s", Summary: metrics.Summary{Latency: metrics.Distribution{P50: 1}}}
		if rep == 2 {
			u.Summary.Latency.P50 = 100 // a disturbed run
			u.Audit = &results.Audit{OK: false, Reasons: []string{"foreign CPU 40% of the machine"}}
		}
		units = append(units, u)
	}
	ds := analysis.NewDataset(s, units)
	below := 2.0
	ds.Claims = &claims.File{Claims: []claims.Claim{{ID: "fast", Text: "fast", Metric: "p50", Expect: claims.Expect{Below: &below}}}}
	_, judged := studySections(ds, Options{})
	if len(judged) != 1 || judged[0].Estimate.N != 2 || judged[0].Verdict != claims.Reproduced {
		t.Fatalf("with the failed run left out: %+v", judged)
	}
	_, judged = studySections(ds, Options{KeepFailedAudits: true})
	if judged[0].Estimate.N != 3 || judged[0].Verdict == claims.Reproduced {
		t.Fatalf("with every run kept: %+v", judged)
	}
}

// The placement table says where cores were lent for boots, and where the
// dependencies started only when the study has any.
func TestPlacementCaptionSaysWhereDeploymentsBooted(t *testing.T) {
	svc := results.PlacedProcess{Name: "web", Kind: results.PlacedService, CPUs: "1", Applied: "1", Method: "cpuset"}
	db := results.PlacedProcess{Name: "db", Kind: results.PlacedDependency, CPUs: "1", Applied: "1", Method: "cpuset"}
	for _, tc := range []struct {
		name           string
		p              results.Placement
		lent, withDeps bool
	}{
		{"booted one by one", results.Placement{Asked: "default", Available: "0-1", Processes: []results.PlacedProcess{svc, db}}, false, false},
		{"lent, no dependencies", results.Placement{Asked: "study", Available: "0-1", BootLent: "0", Processes: []results.PlacedProcess{svc}}, true, false},
		{"lent, a dependency", results.Placement{Asked: "default", Available: "0-1", BootLent: "0", Processes: []results.PlacedProcess{svc, db}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := placementTable(&tc.p).Caption
			if got := strings.Contains(c, "booted two at a time, the second's services on core(s) 0"); got != tc.lent {
				t.Errorf("lent boots said: %v, want %v: %s", got, tc.lent, c)
			}
			if got := strings.Contains(c, "Dependencies started on their own cores"); got != tc.withDeps {
				t.Errorf("dependencies said: %v, want %v: %s", got, tc.withDeps, c)
			}
		})
	}
}
