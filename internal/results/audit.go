package results

import (
	"fmt"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/resources"
)

// The noise audit's thresholds. A step past any of them measured the lab's
// own contention, not only the system under test, and is marked invalid.
const (
	// MaxGeneratorCPU: a generator busy for more than this share of its
	// cores is a bottleneck itself. Its requests leave late and its answers
	// are read late, so the latencies include its own queueing, and a
	// closed model's throughput is the generator's.
	MaxGeneratorCPU = 0.90
	// MaxSteal: the hypervisor ran other guests on this machine's cores for
	// more than this share of the step's CPU time. The services ran slower
	// than their code, and by an amount that changes from run to run. A
	// twentieth is far above the steal of a quiet VM (well under 1%).
	MaxSteal = 0.05
	// MaxForeignCPU: processes outside the run (neither msbench nor a
	// service or dependency of the step) used more than this share of the
	// machine's CPU. They competed for the cores and caches the services
	// ran on. A tenth leaves room for the system's daemons and for the
	// difference between the kernel's tick-sampled totals and the exact
	// per-process accounting.
	MaxForeignCPU = 0.10
	// MinAchievedRate: the open model sent less than this share of the
	// rate asked for (the load engine's own rule, repeated here).
	MinAchievedRate = 0.95
)

// Audit is audit.json of a step: whether the step measured the system and
// not the lab's own contention. The CPU figures cover the step's window:
// from just before its before: requests to just after its collect:
// requests, the load in between.
type Audit struct {
	// OK is false when any check failed; Reasons says which, one sentence
	// each (empty when OK).
	OK      bool     `json:"ok"`
	Reasons []string `json:"reasons"`

	WindowS      float64 `json:"window_s"`
	MachineCores int     `json:"machine_cores"`

	// The generator's CPU over the load, from the load's summary, and the
	// cores it ran on.
	GeneratorCPUs    string  `json:"generator_cpus,omitempty"`
	GeneratorCPUS    float64 `json:"generator_cpu_s"`
	GeneratorCPUUtil float64 `json:"generator_cpu_utilization"`

	// Steal is the CPU time the hypervisor gave to others (/proc/stat).
	StealS     float64 `json:"steal_s"`
	StealShare float64 `json:"steal_share"` // of all the machine's CPU time in the window

	// MachineCPUS is what the machine was busy with, processes and
	// interrupts: the window times the cores less idle, I/O wait and
	// steal (/proc/stat); InterruptS the part /proc/stat's ticks put on
	// interrupts. MsbenchCPUS is what msbench itself did (the generator
	// and its bookkeeping); RunCPUS what the step's services and
	// dependencies did (the resource accountant). Foreign is the rest.
	// On a kernel that charges interrupt time to no process
	// (CONFIG_IRQ_TIME_ACCOUNTING), the run's own network interrupts
	// count as foreign; InterruptS bounds that.
	MachineCPUS  float64 `json:"machine_cpu_s"`
	InterruptS   float64 `json:"interrupt_cpu_s"`
	MsbenchCPUS  float64 `json:"msbench_cpu_s"`
	RunCPUS      float64 `json:"run_cpu_s"`
	ForeignCPUS  float64 `json:"foreign_cpu_s"`
	ForeignShare float64 `json:"foreign_cpu_share"` // of all the machine's CPU time in the window
	// TickSlackS is how far the /proc/stat figures may be off (whole
	// ticks on every core at both ends): steal and foreign CPU fail the
	// audit only by more than that, so a short step is not failed on
	// rounding.
	TickSlackS float64 `json:"tick_slack_s"`

	Model          string  `json:"model"`
	TargetRPS      float64 `json:"target_rps,omitempty"`
	AchievedRPS    float64 `json:"achieved_rps"`
	AchievedRateOK bool    `json:"achieved_rate_ok"`
}

// AuditInput is what the runner measured around a step.
type AuditInput struct {
	Summary metrics.Summary
	// Machine is /proc/stat's difference over the window.
	Machine resources.MachineCPU
	// MsbenchCPUS is msbench's own CPU time (getrusage) over the window;
	// RunCPUS that of every service and dependency of the step.
	MsbenchCPUS, RunCPUS float64
	WindowS              float64
	// Windows is how many windows the figures add up (the slices of an
	// interleaved step); each adds its ends' tick rounding. 0 means 1.
	Windows int
}

// NewAudit judges a step against the thresholds.
func NewAudit(in AuditInput) Audit {
	s := in.Summary
	a := Audit{
		Reasons:          []string{},
		WindowS:          in.WindowS,
		MachineCores:     in.Machine.Cores,
		GeneratorCPUs:    s.GeneratorCPUs,
		GeneratorCPUS:    s.GeneratorCPUS,
		GeneratorCPUUtil: s.GeneratorCPUUtil,
		StealS:           in.Machine.Steal,
		TickSlackS:       in.Machine.Slack() * float64(max(in.Windows, 1)),
		MachineCPUS:      in.Machine.Busy(in.WindowS),
		InterruptS:       in.Machine.IRQ + in.Machine.SoftIRQ,
		MsbenchCPUS:      in.MsbenchCPUS,
		RunCPUS:          in.RunCPUS,
		Model:            s.Model,
		TargetRPS:        s.TargetRPS,
		AchievedRPS:      s.AchievedRPS,
		AchievedRateOK:   s.AchievedRateOK,
	}
	// Tick sampling makes the difference slightly negative on a quiet
	// machine; no process ran a negative time.
	a.ForeignCPUS = max(0, a.MachineCPUS-a.MsbenchCPUS-a.RunCPUS)
	total := in.Machine.Capacity(in.WindowS)
	if total > 0 {
		a.StealShare = a.StealS / total
		a.ForeignShare = a.ForeignCPUS / total
	}
	if a.GeneratorCPUUtil > MaxGeneratorCPU {
		cores := "its cores"
		if a.GeneratorCPUs != "" {
			cores = "cores " + a.GeneratorCPUs
		}
		a.Reasons = append(a.Reasons, fmt.Sprintf("the generator was saturated: it used %.0f%% of %s (over %.0f%%), so it measured its own queueing",
			100*a.GeneratorCPUUtil, cores, 100*MaxGeneratorCPU))
	}
	if a.StealShare > MaxSteal && a.StealS-a.TickSlackS > MaxSteal*total {
		a.Reasons = append(a.Reasons, fmt.Sprintf("the hypervisor stole %.1f%% of the machine's CPU time (over %.0f%%)", 100*a.StealShare, 100*MaxSteal))
	}
	if a.ForeignShare > MaxForeignCPU && a.ForeignCPUS-a.TickSlackS > MaxForeignCPU*total {
		a.Reasons = append(a.Reasons, fmt.Sprintf("processes outside the run used %.1f%% of the machine's CPU, %.2f s (over %.0f%%)", 100*a.ForeignShare, a.ForeignCPUS, 100*MaxForeignCPU))
	}
	if s.Model == "open" && (!s.AchievedRateOK || s.AchievedRPS < MinAchievedRate*s.TargetRPS) {
		a.Reasons = append(a.Reasons, fmt.Sprintf("achieved %.1f req/s of %.1f asked (under %.0f%%)", s.AchievedRPS, s.TargetRPS, 100*MinAchievedRate))
	}
	a.OK = len(a.Reasons) == 0
	return a
}
