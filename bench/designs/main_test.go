package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

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
		p := spread(perRun)
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
			p.add(spread(values))
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

// synthetic is a campaign of pairs of runs with known spreads: a run's
// repetitions spread by its design's σ times the hour's factor (the
// machine drifts more at some hours), the same for both runs of a pair
// when they were made side by side, else drawn for each; and the
// quantities of one repetition share half their variance (the steps of
// one deployment).
func synthetic(rng *rand.Rand, pairs, reps, quantities int, sigma [2]float64, perRep [2]time.Duration, hour float64, sideBySide bool) [2]*design {
	var ds [2]*design
	for d := range ds {
		ds[d] = &design{name: fmt.Sprint(d), whole: map[string]bool{}}
	}
	for range pairs {
		h := math.Exp(hour * rng.NormFloat64())
		for d, dd := range ds {
			if !sideBySide {
				h = math.Exp(hour * rng.NormFloat64())
			}
			values := make([][]float64, quantities)
			for range reps {
				shared := rng.NormFloat64()
				for q := range values {
					z := math.Sqrt(0.5)*shared + math.Sqrt(0.5)*rng.NormFloat64()
					values[q] = append(values[q], math.Exp(sigma[d]*h*z))
				}
			}
			r := run{repetitions: reps, took: time.Duration(reps) * perRep[d], cells: map[string]pool{}}
			for q, v := range values {
				r.cells[fmt.Sprintf("claim q%d", q)] = spread(v)
			}
			dd.runs = append(dd.runs, r)
		}
	}
	return ds
}

// The interval on the median width ratio covers the true ratio about as
// often as it says, for campaigns of the size one evening makes: pairs of
// runs made side by side, resampled as pairs, while the machine's drift
// changes from pair to pair (hour factors spread 30%) or not at all; and
// runs made at hours of their own, resampled apart. The plain percentile
// interval covered 87–91% from 6–10 pairs.
func TestIntervalCoversTheTrueRatio(t *testing.T) {
	const trials = 300
	sigma := [2]float64{0.04, 0.06}
	perRep := [2]time.Duration{39 * time.Second, 37 * time.Second}
	budget := 10 * time.Minute
	for _, tc := range []struct {
		pairs, reps int
		hour        float64
		paired      bool
	}{
		{6, 3, 0.3, true},
		{10, 3, 0.3, true},
		{6, 3, 0, true},
		{6, 3, 0.3, false},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.pairs), 7))
		eh2 := math.Exp(2 * tc.hour * tc.hour) // E[h²] of the hour factor
		ra, rb := budget.Seconds()/perRep[0].Seconds(), budget.Seconds()/perRep[1].Seconds()
		truth := width(sigma[0]*math.Sqrt(eh2), ra) / width(sigma[1]*math.Sqrt(eh2), rb)
		covered := 0
		for i := range trials {
			ds := synthetic(rng, tc.pairs, tc.reps, 12, sigma, perRep, tc.hour, tc.paired)
			iv := compare(ds[0], ds[1], budget).intervals(tc.paired, 1000, uint64(i))["claim"]
			if iv[0] <= truth && truth <= iv[1] {
				covered++
			}
		}
		cover := float64(covered) / trials
		t.Logf("%d pairs of %d repetitions, hour factor %.0f%%, paired %v: truth %.3f, coverage %.3f", tc.pairs, tc.reps, 100*tc.hour, tc.paired, truth, cover)
		if cover < 0.85 || cover > 0.995 {
			t.Errorf("%d pairs, hour %.1f, paired %v: coverage %.3f, want about 0.95", tc.pairs, tc.hour, tc.paired, cover)
		}
	}
}

// A quantity that never varied in either design (a claim's part that is
// the same count every time) says nothing of widths: it is left out and
// counted, not a 0/0 that made the kind's median NaN.
func TestConstantQuantityIsLeftOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := synthetic(rng, 3, 3, 4, [2]float64{0.04, 0.06}, [2]time.Duration{time.Minute, time.Minute}, 0, true)
	for _, d := range ds {
		for _, r := range d.runs {
			r.cells["claim same"] = spread([]float64{2, 2, 2})
		}
	}
	c := compare(ds[0], ds[1], 10*time.Minute)
	if c.constant != 1 || len(c.keys) != 4 {
		t.Fatalf("constant %d, keys %v: want the constant one apart", c.constant, c.keys)
	}
	s := summarise(c.cells(ds[0].every(), ds[1].every()))["claim"]
	if s.quantities != 4 || math.IsNaN(s.ratio) || math.IsNaN(s.sdRatio) {
		t.Errorf("summary %+v: want 4 quantities and numbers", s)
	}
}
