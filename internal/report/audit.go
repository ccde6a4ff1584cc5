package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/results"
)

// auditCell is the per-step table's audit column for one variant's
// repetitions: "ok", "FAILED n of m", or "—" when the run predates audits.
func auditCell(units []*analysis.Unit) string {
	audited, failed := 0, 0
	for _, u := range units {
		if u.Audit != nil {
			audited++
		}
		if !u.AuditOK() {
			failed++
		}
	}
	switch {
	case audited == 0:
		return "—"
	case failed == 0:
		return "ok"
	}
	return fmt.Sprintf("FAILED %d of %d", failed, len(units))
}

// auditCaption explains the audit column.
var auditCaption = fmt.Sprintf(" Audit: the step's noise audit, which a step fails when the generator used over %.0f%% of its cores, the hypervisor stole over %.0f%% of the CPU time, processes outside the run used over %.0f%% of the machine, or an open model achieved under %.0f%% of its rate; a failed step is invalid and its numbers measure the lab's contention too.",
	100*results.MaxGeneratorCPU, 100*results.MaxSteal, 100*results.MaxForeignCPU, 100*results.MinAchievedRate)

// auditWarnings are a step's visible warnings: one line per repetition of
// a variant that failed its noise audit, with its figures.
func auditWarnings(ds *analysis.Dataset, step string) []string {
	var out []string
	for _, v := range ds.Study.Runs() {
		for _, u := range ds.Units(v.Key(), step) {
			if u.AuditOK() {
				continue
			}
			a := u.Audit
			out = append(out, fmt.Sprintf("⚠ NOISE AUDIT FAILED, step %s, variant %s, repetition %d: %s. (Generator %.0f%% of cores %s, steal %.1f%%, other processes %.1f%% of the machine.) Read its numbers as the lab's contention as much as the system's.",
				step, v.Key(), u.Rep, strings.Join(a.Reasons, "; "), 100*a.GeneratorCPUUtil, orDash(a.GeneratorCPUs), 100*a.StealShare, 100*a.ForeignShare))
		}
	}
	return out
}

// placementTable shows where the run placed its processes, asked and
// applied.
func placementTable(p *results.Placement) analysis.Table {
	t := analysis.Table{
		Caption: fmt.Sprintf("CPU placement (%s; msbench could use cores %s). Cores: where each process was to run, every core when empty; applied: its Cpus_allowed_list once started.", p.Asked, p.Available),
		Header:  []string{"process", "kind", "asked", "cores", "applied", "method"},
	}
	if p.BootLent != "" {
		t.Caption += fmt.Sprintf(" A repetition's deployments booted two at a time, the second's services on core(s) %s (where no service runs, idle while nothing is measured) on as many cores as their own, and moved to their own once ready, before the first request.", p.BootLent)
		if slices.ContainsFunc(p.Processes, func(pp results.PlacedProcess) bool { return pp.Kind == results.PlacedDependency }) {
			t.Caption += " Dependencies started on their own cores, where they stay."
		}
	}
	for _, pp := range p.Processes {
		t.Rows = append(t.Rows, []string{pp.Name, pp.Kind, orDash(pp.Asked), orDash(pp.CPUs), pp.Applied, pp.Method})
	}
	return t
}

// hostsTable shows the emulated hosts of the first variant that ran on
// any (the study's hosts: are the same for every variant).
func hostsTable(ds *analysis.Dataset) (analysis.Table, bool) {
	for _, v := range ds.Variants {
		st, err := ds.Startup(1, v.Key())
		if err != nil || st == nil || len(st.Hosts) == 0 {
			continue
		}
		t := analysis.Table{
			Caption: fmt.Sprintf("Emulated hosts: each a network namespace with its own address; the generator, the link proxies and the dependencies' forwarders are on msbench's side of the bridge, %s.", st.LabAddr),
			Header:  []string{"host", "address", "runs"},
		}
		for _, h := range st.Hosts {
			t.Rows = append(t.Rows, []string{h.Name, h.Addr, strings.Join(h.Instances, ", ")})
		}
		return t, true
	}
	return analysis.Table{}, false
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
