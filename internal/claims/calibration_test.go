package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/msbench/msbench/internal/stats"
)

// The calibration suite: verdicts on synthetic runs whose truth is known,
// judged through Judge as a report judges them. A run is requests of
// lognormal latency whose log follows an AR(1) process (successive
// requests alike, as on a real machine), summarised by its p50; each
// deployment adds its own offset, the run-to-run variation. Seeded, so
// every figure is the same on every machine.

// calibration is one setting of the simulated machine.
type calibration struct {
	phi    float64 // AR(1) autocorrelation of successive requests' log latency
	offset float64 // run-to-run SD of a deployment's log level (0.03 ≈ 3%)
}

var calibrations = []calibration{{0.5, 0.03}, {0.5, 0.20}, {0.9, 0.03}, {0.9, 0.20}}

const (
	requests = 100 // per run
	withinSD = 0.3 // SD of a request's log latency within a run
	aaSteps  = 8   // A/A pairs per repetition: one per step
)

// deployment is the p50 of one run of one deployment of a system whose
// median latency is exp(mu).
func (c calibration) deployment(r *rand.Rand, mu float64, buf []float64) float64 {
	return c.step(r, c.level(r, mu), buf)
}

// level is a new deployment's log level: the system's, plus its luck.
func (c calibration) level(r *rand.Rand, mu float64) float64 {
	return mu + c.offset*r.NormFloat64()
}

// step is the p50 of one step measured on a deployment at level: the
// deployment's luck is the same in every step, the requests are new.
func (c calibration) step(r *rand.Rand, level float64, buf []float64) float64 {
	innov := withinSD * math.Sqrt(1-c.phi*c.phi)
	z := withinSD * r.NormFloat64()
	for i := range buf {
		z = c.phi*z + innov*r.NormFloat64()
		buf[i] = level + z
	}
	return math.Exp(stats.QuantilesInPlace(buf, 0.5)[0])
}

// trial simulates n repetitions of two systems measured side by side,
// whose true ratio of medians is truth, and the A/A twin: the per-run
// ratios and the noise model the report would make of the twin. As in a
// run, the twin's steps in one repetition are measured on the same two
// deployments, so their pairs share those deployments' luck.
func (c calibration) trial(r *rand.Rand, n int, truth float64, buf []float64) (Metric, Noise) {
	m := Metric{Ratio: true, Kind: Latency}
	groups := make([][][2]float64, n)
	for rep := range n {
		m.PerRun = append(m.PerRun, c.deployment(r, math.Log(truth), buf)/c.deployment(r, 0, buf))
		first, twin := c.level(r, 0), c.level(r, 0)
		for range aaSteps {
			groups[rep] = append(groups[rep], [2]float64{c.step(r, first, buf), c.step(r, twin, buf)})
		}
	}
	return m, Noise{Latency: stats.LogSpread(groups)}
}

// Intervals over n ≥ 3 runs cover the truth 93–97% of the time, on every
// setting of the machine.
func TestCalibrationCoverage(t *testing.T) {
	const trials, truth = 1500, 1.3
	buf := make([]float64, requests)
	c := Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(1)}}
	for i, cal := range calibrations {
		for _, n := range []int{3, 5} {
			r := rand.New(rand.NewPCG(uint64(100+i), uint64(n)))
			covered := 0
			for range trials {
				m, noise := cal.trial(r, n, truth, buf)
				e := Judge(c, map[string]Metric{"m": m}, noise).Estimate
				if e.Lo <= truth && truth <= e.Hi {
					covered++
				}
			}
			cov := float64(covered) / trials
			t.Logf("φ=%.1f offset=%2.0f%% n=%d: coverage %.1f%% of %d", cal.phi, 100*cal.offset, n, 100*cov, trials)
			if cov < 0.93 || cov > 0.97 {
				t.Errorf("φ=%.1f offset=%.2f n=%d: coverage %.3f, want 0.93–0.97", cal.phi, cal.offset, n, cov)
			}
		}
	}
}

// With the truth exactly on a claim's edge, a decisive verdict is an
// error whichever way it goes: it must come no more often than the 5% an
// interval at 95% allows, for one run as for many. Before the noise model
// one run decided every time (its point estimate lies on one side).
// The bound is 5% plus three standard errors of the trial count (0.6%
// each): at exactly 5% the seeded count could land either side of it.
func TestCalibrationDecisiveAtTheEdge(t *testing.T) {
	const trials, edge = 1500, 1.2
	buf := make([]float64, requests)
	c := Claim{ID: "c", Metric: "m", Expect: Expect{Above: ptr(edge)}}
	limit := 0.05 + 3*math.Sqrt(0.05*0.95/trials)
	for i, cal := range calibrations {
		for _, n := range []int{1, 2, 3, 5} {
			r := rand.New(rand.NewPCG(uint64(200+i), uint64(n)))
			decisive := 0
			for range trials {
				m, noise := cal.trial(r, n, edge, buf)
				if v := Judge(c, map[string]Metric{"m": m}, noise).Verdict; v == Reproduced || v == NotReproduced {
					decisive++
				}
			}
			rate := float64(decisive) / trials
			t.Logf("φ=%.1f offset=%2.0f%% n=%d: decisive at the edge %.1f%% of %d", cal.phi, 100*cal.offset, n, 100*rate, trials)
			if rate > limit {
				t.Errorf("φ=%.1f offset=%.2f n=%d: decisive %.3f of the time at the edge, want at most %.3f", cal.phi, cal.offset, n, rate, limit)
			}
		}
	}
}

// The noise model's 95% interval covers the true run-to-run spread of a
// deployment's log p50 (the offset and the p50's own sampling noise,
// measured once on many deployments) about 95% of the time.
func TestCalibrationNoiseModel(t *testing.T) {
	const trials, reference = 1000, 20000
	buf := make([]float64, requests)
	for i, cal := range calibrations {
		r := rand.New(rand.NewPCG(uint64(300+i), 1))
		logs := make([]float64, reference)
		for j := range logs {
			logs[j] = math.Log(cal.deployment(r, 0, buf))
		}
		sigma := stats.StdDev(logs)
		covered := 0
		for range trials {
			_, noise := cal.trial(r, 1, 1, buf)
			if s := noise[Latency]; s.Lo <= sigma && sigma <= s.Hi {
				covered++
			}
		}
		cov := float64(covered) / trials
		t.Logf("φ=%.1f offset=%2.0f%%: true σ %.1f%%, the A/A interval (%d pairs of one repetition) covers it %.1f%% of %d", cal.phi, 100*cal.offset, 100*sigma, aaSteps, 100*cov, trials)
		// Up to 99%: where each step's own noise outweighs the deployments'
		// luck, the grouped spread is conservative by design (it bounds
		// the shared part from above; see stats.LogSpread).
		if cov < 0.92 || cov > 0.99 {
			t.Errorf("φ=%.1f offset=%.2f: noise model coverage %.3f, want about 0.95", cal.phi, cal.offset, cov)
		}
	}
}

// What judging costs: a claim on 5 runs, one on 1 run with the noise
// model, and a conjunction of 8 comparisons.
func BenchmarkJudge(b *testing.B) {
	noise := Noise{Latency: {Sigma: 0.05, Lo: 0.04, Hi: 0.07, DF: 24}}
	c := Claim{ID: "c", Metric: "m", Expect: Expect{Below: ptr(1)}}
	var parts []Part
	for i := range 8 {
		parts = append(parts, Part{Label: fmt.Sprint(i), PerRun: runs(0.8, 0.05, 5, uint64(i))})
	}
	for _, bc := range []struct {
		name string
		m    Metric
	}{
		{"five runs", Metric{PerRun: runs(0.8, 0.05, 5, 1), Ratio: true, Kind: Latency}},
		{"one run", Metric{PerRun: []float64{0.8}, Ratio: true, Kind: Latency}},
		{"eight comparisons", Metric{All: parts, Ratio: true, Kind: Latency}},
	} {
		metrics := map[string]Metric{"m": bc.m}
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				Judge(c, metrics, noise)
			}
		})
	}
}
