package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/msbench/msbench/internal/claims"
)

// The width it predicts is the width the report's claims get from the
// same repetitions: a t-interval on the logs over R repetitions.
func TestWidthIsTheClaimsInterval(t *testing.T) {
	for _, perRun := range [][]float64{
		{1.10, 0.95, 1.02},
		{0.80, 0.85, 0.90, 0.70, 0.88},
		{1.5, 1.4, 1.6, 1.45, 1.55, 1.52, 1.38, 1.49},
	} {
		var p pool
		p.add(perRun)
		e := claims.Summarise(claims.Metric{PerRun: perRun, Ratio: true}, nil, 0.95)
		if got, want := width(p.sd(), float64(len(perRun))), e.Hi/e.Lo-1; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%v: width %.6f, the claims' interval %.6f", perRun, got, want)
		}
	}
}

// Pooling removes each run's own mean: runs whose centres differ (other
// seeds, another day) but whose repetitions spread alike give that spread,
// not the spread between runs; and it is unbiased for the variance, so
// the mean of many pooled variances is the true one.
func TestPoolIsTheSpreadWithinRuns(t *testing.T) {
	const sigma = 0.05
	rng := rand.New(rand.NewPCG(1, 2))
	var sum float64
	const trials = 4000
	for range trials {
		var p pool
		for run := range 3 {
			centre := math.Exp(0.3 * float64(run)) // far apart
			values := make([]float64, 4)
			for i := range values {
				values[i] = centre * math.Exp(sigma*rng.NormFloat64())
			}
			p.add(values)
		}
		if p.df != 9 {
			t.Fatalf("df %d, want 3 runs × 3", p.df)
		}
		sum += p.sd() * p.sd()
	}
	if v := sum / trials; math.Abs(v-sigma*sigma) > 0.05*sigma*sigma {
		t.Errorf("mean pooled variance %.6f, want %.6f", v, sigma*sigma)
	}
}
