package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/stats"
)

// The calibration suite: synthetic per-run values whose truth is known,
// put through Compare and Apply exactly as msbench compare does, to show
// that the gate keeps its promise (a build no worse than every limit fails
// at most 5% of the time for the whole comparison) and that the intervals
// cover the truth 95% of the time.
//
// A run's p99 is the system's level × a run-to-run offset exp(σ·z) (another
// deployment, another moment of the machine) × the sampling error of a
// p99 read from one run: the p99 of a real series of 2,000 lognormal
// latencies (log sd 0.4) with AR(1) autocorrelation φ between successive
// requests, drawn from a pool of such series made once per φ. Every
// comparison has 6 cells (steps) with offsets drawn independently per
// cell, the case in which Bonferroni is least conservative.

const (
	calCells    = 6
	calRequests = 2000
	calPool     = 1000
)

// withinPool returns calPool centred log-p99 deviations, each from one
// AR(1) series of calRequests latencies: how far one run's p99 lands from
// the system's own because the run was finite and its requests correlated.
func withinPool(phi float64) []float64 {
	r := rand.New(rand.NewPCG(uint64(phi*1000), 17))
	innov := math.Sqrt(1 - phi*phi) // keeps the log's marginal sd at 0.4 whatever φ
	xs := make([]float64, calRequests)
	pool := make([]float64, calPool)
	for i := range pool {
		x := r.NormFloat64()
		for j := range xs {
			xs[j] = math.Exp(0.4 * x)
			x = phi*x + innov*r.NormFloat64()
		}
		pool[i] = math.Log(stats.Quantile(xs, 0.99))
	}
	m := stats.Mean(pool)
	for i := range pool {
		pool[i] -= m
	}
	return pool
}

// calSystem draws runs of one system.
type calSystem struct {
	r      *rand.Rand
	offset float64   // run-to-run σ of the log
	pool   []float64 // within-run deviations
}

// run is one run's summary of a cell whose true p99 is level; the other
// latency figures follow it (only p99 is gated here).
func (s calSystem) run(level float64) metrics.Summary {
	v := level * math.Exp(s.offset*s.r.NormFloat64()+s.pool[s.r.IntN(len(s.pool))])
	return metrics.Summary{Valid: true, Requests: 1000, Successes: 1000, ThroughputRPS: 100,
		Latency: metrics.Distribution{P50: v / 3, P90: v / 2, P99: v, Mean: v / 2.5}}
}

// source is one side: n runs of every cell, cell i at level (10+i) ×
// scale[i].
func (s calSystem) source(name string, n int, scale []float64) *Source {
	src := &Source{Dir: name, Kind: KindRun}
	for i := range calCells {
		c := &Cell{Step: fmt.Sprintf("step-%d", i), Variant: "go"}
		for rep := 1; rep <= n; rep++ {
			c.Units = append(c.Units, Unit{Rep: rep, Summary: s.run(float64(10+i) * scale[i])})
		}
		src.Cells = append(src.Cells, c)
	}
	return src
}

// noise is a noise model from one repetition of a 6-step study with its
// A/A twin: 6 pairs, a quick profile's worth. Offsets are drawn per cell
// here, as for the sides, so the pairs share no deployment and each is
// its own group (for pairs that do, see stats.LogSpread's test).
func (s calSystem) noise() *Noise {
	var pairs [][][2]metrics.Summary
	for i := range calCells {
		pairs = append(pairs, [][2]metrics.Summary{{s.run(float64(10 + i)), s.run(float64(10 + i))}})
	}
	return newNoise("aa", KindRun, pairs, nil)
}

func uniform(x float64) []float64 {
	out := make([]float64, calCells)
	for i := range out {
		out[i] = x
	}
	return out
}

// calResult is what one configuration gave over its trials.
type calResult struct {
	failed, unknown, covered, intervals, trials int
}

func (c calResult) rate(k int) float64 { return float64(k) / float64(c.trials) }

// calibrate runs trials comparisons of n runs a side (n = 1: one run a
// side with a fresh noise model each time), NEW's true p99 = BASE's ×
// truth in every cell, gated by p99>+10%, and counts failed gates, tests
// the gate could not decide, and 95% intervals covering the truth.
func calibrate(t testing.TB, rule Rule, sys calSystem, n, trials int, truth float64) calResult {
	res := calResult{trials: trials}
	for range trials {
		opt := Options{}
		if n == 1 {
			opt.Noise = sys.noise()
		}
		r, err := Compare(sys.source("base", n, uniform(1)), sys.source("new", n, uniform(truth)), opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Apply([]Rule{rule}); err != nil {
			t.Fatal(err)
		}
		if r.Failed {
			res.failed++
		}
		res.unknown += r.Gate.Unknown
		for _, c := range r.Comparisons {
			m := c.Metric("p99")
			res.intervals++
			if float64(m.Lo) <= truth && truth <= float64(m.Hi) {
				res.covered++
			}
		}
	}
	return res
}

func TestCompareCalibration(t *testing.T) {
	rule, err := ParseRule("p99>+10%")
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 A/A comparisons (6,000 intervals) put the coverage within
	// ±0.3% (one standard error); the edge and power need less.
	const trials, fewer = 1000, 300
	for _, phi := range []float64{0.5, 0.9} {
		pool := withinPool(phi)
		t.Logf("φ %.1f: one run's p99 of %d requests lands %.1f%% (sd of its log) from the system's", phi, calRequests, 100*stats.StdDev(pool))
		for _, offset := range []float64{0.03, 0.20} {
			for _, n := range []int{1, 2, 3, 5} {
				seed := uint64(phi*10)*1000 + uint64(offset*100)*10 + uint64(n)
				sys := calSystem{r: rand.New(rand.NewPCG(seed, 1)), offset: offset, pool: pool}
				aa := calibrate(t, rule, sys, n, trials, 1)
				edge := calibrate(t, rule, sys, n, fewer, 1.1)
				power := calibrate(t, rule, sys, n, fewer, 1.5)
				method := fmt.Sprintf("%d runs a side", n)
				if n == 1 {
					method = "1 run a side, --noise from 6 A/A pairs"
				}
				t.Logf("φ %.1f, offsets %2.0f%%, %-38s A/A: gate failed %5.1f%% of comparisons, intervals covered 1 in %5.2f%%, %4.1f%% of tests unbounded; "+
					"truth on the limit (1.10): failed %4.1f%%; truth 1.50: failed %5.1f%%",
					phi, 100*offset, method+":", 100*aa.rate(aa.failed), 100*float64(aa.covered)/float64(aa.intervals),
					100*float64(aa.unknown)/float64(aa.trials*calCells), 100*edge.rate(edge.failed), 100*power.rate(power.failed))
				if fa := aa.rate(aa.failed); fa > 0.05 {
					t.Errorf("φ %.1f, offsets %.0f%%, n %d: identical systems fail p99>+10%% in %.1f%% of %d-cell comparisons, want at most 5%%",
						phi, 100*offset, n, 100*fa, calCells)
				}
				// With 3 runs a side Welch's degrees of freedom (2 to 4, where
				// equal spreads would give 4) make Fieller's interval a little
				// wide: 96–97% here, a shade over 97 when a skewed within-run
				// p99 dominates (φ 0.9, offsets 3%). Wide errs on the side of
				// no false alarm, so 97.5% is allowed there; 5 runs must be
				// within 93–97%.
				hiCov := 0.97
				if n == 3 {
					hiCov = 0.975
				}
				if cov := float64(aa.covered) / float64(aa.intervals); n >= 3 && (cov < 0.93 || cov > hiCov) {
					t.Errorf("φ %.1f, offsets %.0f%%, n %d: the 95%% interval covers the truth in %.2f%%, want 93–%.1f%%", phi, 100*offset, n, 100*cov, 100*hiCov)
				}
				// A gate that never fails keeps any false-alarm promise: with
				// five runs a side and small offsets, a 50% regression in
				// every cell must be caught.
				if p := power.rate(power.failed); n == 5 && offset == 0.03 && p < 0.9 {
					t.Errorf("φ %.1f, n 5, offsets 3%%: a 50%% regression fails the gate in only %.1f%%", phi, 100*p)
				}
			}
		}
	}
}

// BenchmarkCompareGate is what the gate costs over per-run values: Compare
// and Apply for a 6-cell comparison of 5 runs a side (Fieller) and of one
// run a side with a noise model.
func BenchmarkCompareGate(b *testing.B) {
	rule, err := ParseRule("p99>+10%")
	if err != nil {
		b.Fatal(err)
	}
	pool := withinPool(0.5)
	for _, n := range []int{5, 1} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			sys := calSystem{r: rand.New(rand.NewPCG(1, 2)), offset: 0.03, pool: pool}
			base, next := sys.source("base", n, uniform(1)), sys.source("new", n, uniform(1))
			opt := Options{}
			if n == 1 {
				opt.Noise = sys.noise()
			}
			for b.Loop() {
				r, err := Compare(base, next, opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Apply([]Rule{rule}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
