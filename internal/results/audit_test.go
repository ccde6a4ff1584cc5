package results

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/resources"
)

func TestAuditThresholds(t *testing.T) {
	// 10 s on 2 cores: 20 s of CPU time in all.
	quiet := resources.MachineCPU{User: 6, System: 2, Idle: 11.9, Steal: 0.1, Cores: 2}
	open := metrics.Summary{Model: "open", TargetRPS: 1000, AchievedRPS: 999, AchievedRateOK: true, GeneratorCPUUtil: 0.4, GeneratorCPUs: "0"}
	tests := []struct {
		name    string
		in      AuditInput
		ok      bool
		reason  string
		foreign float64
	}{
		{"quiet", AuditInput{Summary: open, Machine: quiet, MsbenchCPUS: 4, RunCPUS: 3.5, WindowS: 10}, true, "", 0.5},
		{"saturated generator", AuditInput{Summary: withUtil(open, 0.97), Machine: quiet, MsbenchCPUS: 4, RunCPUS: 3.5, WindowS: 10}, false, "the generator was saturated: it used 97% of cores 0", 0.5},
		{"steal", AuditInput{Summary: open, Machine: resources.MachineCPU{User: 6, System: 2, Idle: 10, Steal: 2, Cores: 2}, MsbenchCPUS: 4, RunCPUS: 4, WindowS: 10}, false, "stole 10.0%", 0},
		{"foreign", AuditInput{Summary: open, Machine: resources.MachineCPU{User: 12, System: 2, Idle: 6, Cores: 2}, MsbenchCPUS: 4, RunCPUS: 4, WindowS: 10}, false, "outside the run used 30.0%", 6},
		{"rate not achieved", AuditInput{Summary: metrics.Summary{Model: "open", TargetRPS: 1000, AchievedRPS: 500}, Machine: quiet, MsbenchCPUS: 4, RunCPUS: 4, WindowS: 10}, false, "achieved 500.0 req/s of 1000.0", 0},
		{"a short step within the ticks' rounding", AuditInput{Summary: open, Machine: resources.MachineCPU{User: 0.05, Idle: 0.05, Cores: 2}, MsbenchCPUS: 0.01, RunCPUS: 0.02, WindowS: 0.05}, true, "", 0.02},
		{"closed model has no rate to miss", AuditInput{Summary: metrics.Summary{Model: "closed", AchievedRPS: 5}, Machine: quiet, MsbenchCPUS: 9, RunCPUS: 4, WindowS: 10}, true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAudit(tt.in)
			if a.OK != tt.ok || (tt.reason != "" && (len(a.Reasons) != 1 || !strings.Contains(a.Reasons[0], tt.reason))) || (tt.ok && len(a.Reasons) != 0) {
				t.Fatalf("ok %v reasons %q", a.OK, a.Reasons)
			}
			if a.ForeignCPUS < tt.foreign-1e-9 || a.ForeignCPUS > tt.foreign+1e-9 {
				t.Fatalf("foreign %v s, want %v", a.ForeignCPUS, tt.foreign)
			}
		})
	}
}

func withUtil(s metrics.Summary, u float64) metrics.Summary {
	s.GeneratorCPUUtil = u
	return s
}

func TestAuditAndPlacementRoundTrip(t *testing.T) {
	dir := StepDir(t.TempDir())
	if a, err := dir.ReadAudit(); a != nil || err != nil {
		t.Fatalf("a step without audit.json: %v %v", a, err)
	}
	want := NewAudit(AuditInput{Summary: metrics.Summary{Model: "closed"}, Machine: resources.MachineCPU{User: 1, Idle: 1, Cores: 2}, WindowS: 1})
	if err := dir.WriteAudit(want); err != nil {
		t.Fatal(err)
	}
	got, err := dir.ReadAudit()
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("read back %+v %v, want %+v", got, err, want)
	}
	run, err := Create(t.TempDir(), "s", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	prov := Provenance{Study: "s", Placement: &Placement{Asked: PlacementStudy, Available: "0-1", Processes: []PlacedProcess{
		{Name: "generator", Kind: "generator", Asked: "0", CPUs: "0", Applied: "0", Method: "affinity"},
		{Name: "db", Kind: "dependency", CPUs: "1", Applied: "1", Method: "cpuset"},
	}}}
	if err := run.WriteProvenance(prov); err != nil {
		t.Fatal(err)
	}
	back, err := run.ReadProvenance()
	if err != nil || !reflect.DeepEqual(back.Placement, prov.Placement) {
		t.Fatalf("placement read back %+v %v", back.Placement, err)
	}
}
