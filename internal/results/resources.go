package results

import "github.com/msbench/msbench/internal/resources"

// ServiceUsage is what one service instance used during a step.
type ServiceUsage struct {
	Name         string             `json:"name"`
	Service      string             `json:"service"`
	CPUUserS     float64            `json:"cpu_user_s"`
	CPUSysS      float64            `json:"cpu_sys_s"`
	PeakMemBytes int64              `json:"peak_mem_bytes"`
	Samples      []resources.Sample `json:"samples"`
}

// StepResources is resources.json of a step.
type StepResources struct {
	Method   string         `json:"method"`
	Services []ServiceUsage `json:"services"`
	// IdleCPUS is what the repetition's other deployments used while this
	// one was measured in slices: the cost of keeping them up between
	// their turns. Counted as the run's, not foreign, in the noise audit.
	IdleCPUS float64 `json:"idle_deployments_cpu_s,omitempty"`
}
