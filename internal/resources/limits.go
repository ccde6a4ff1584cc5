package resources

import (
	"fmt"
	"math"
)

// cfsPeriodUS is the CFS bandwidth period: the kernel default, short enough
// that a capped service is throttled in small slices rather than frozen for
// long stretches that would distort its latency more than the cap itself.
const cfsPeriodUS = 100_000

// minQuotaUS is the smallest quota the kernel accepts.
const minQuotaUS = 1_000

// cfsQuotaUS converts a CPU cap into a quota per cfsPeriodUS.
func cfsQuotaUS(cpus float64) (int64, error) {
	q := int64(math.Round(cpus * cfsPeriodUS))
	if q < minQuotaUS {
		return 0, fmt.Errorf("cpu cap %g is below the kernel minimum of %g", cpus, float64(minQuotaUS)/cfsPeriodUS)
	}
	return q, nil
}
