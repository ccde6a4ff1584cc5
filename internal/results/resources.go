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
}
