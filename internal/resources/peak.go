package resources

// sampledPeak is the peak as the maximum of observed values since the last
// reset, for when the kernel keeps no resettable peak. It only sees what is
// sampled, so a short spike between samples is missed: run a Sampler.
// Callers serialise access.
type sampledPeak struct {
	max int64
}

func (p *sampledPeak) observe(v int64) int64 {
	p.max = max(p.max, v)
	return p.max
}

func (p *sampledPeak) reset(current int64) { p.max = current }

// kernelPeak is a peak-usage counter kept by the kernel that can be reset.
type kernelPeak interface {
	read() (int64, error)
	// reset returns errNoPeakReset when this kernel cannot reset it.
	reset() error
	close() error
}
