package resources

import "fmt"

// New returns the best accountant this machine offers: cgroup v2, then
// cgroup v1, then /proc. A cgroup method that is detected but cannot be set
// up (not root, read-only cgroupfs, controllers not delegable) is skipped;
// call NewMethod to see why.
func New(runID string) (Accountant, error) {
	if err := validName(runID); err != nil {
		return nil, fmt.Errorf("resources: run id: %w", err)
	}
	for _, m := range []string{MethodCgroupV2, MethodCgroupV1} {
		if a, err := NewMethod(runID, m); err == nil {
			return a, nil
		}
	}
	return newProcAccountant(), nil
}

// NewMethod returns an accountant of the given method, or an error saying
// why this machine cannot provide it.
func NewMethod(runID, method string) (Accountant, error) {
	if method == MethodProc {
		return newProcAccountant(), nil
	}
	d, err := Detect()
	if err != nil {
		return nil, err
	}
	var (
		roots ctlPaths
		ops   cgroupOps
	)
	switch method {
	case MethodCgroupV2:
		roots, err = d.v2Roots()
		ops = v2Ops{}
	case MethodCgroupV1:
		roots, err = d.v1Roots()
		ops = v1Ops{}
	default:
		return nil, fmt.Errorf("resources: unknown method %q", method)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return newCgroupAccountant(ops, roots, runID)
}
