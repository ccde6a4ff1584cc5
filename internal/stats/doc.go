// Package stats holds the few statistics msbench needs to compare
// benchmark results honestly: robust summaries (median, quantiles) and
// confidence intervals that respect the unit of replication, the run.
//
// Across runs: MeanCI (Student-t on per-run values; MeanCIIn clamps it to
// the Range the quantity can take), MedianCI (the median with its
// order-statistic interval), GeoMeanCI (geometric mean of per-run ratios,
// t-interval on logs), RunRatio (ratio of means of two independent sets
// of runs, Fieller–Welch; RunRatioIn cuts it to the ratio's Range, and an
// unbounded interval stays unbounded), PairedRunRatio and PairedRunDiff (runs made in pairs)
// and RunDiff (difference of means, Welch). Run-to-run noise: a Spread is
// the standard deviation of one deployment's value with its χ² interval,
// from A/A pairs grouped by the deployments they share (LogSpread for
// ratios, DiffSpread for differences) or from independent runs of one
// system (SampleSpread); Spread.RatioCI and
// Spread.DiffCI give a comparison of single runs the interval that
// repetitions would otherwise give. Within one run:
// BlockBootstrapCI, a circular-block bootstrap over the time-ordered
// series with an automatic block length (BlockLength), because successive
// requests are autocorrelated and resampling single requests gives
// intervals several times too narrow. There is deliberately no test or
// interval over pooled single requests.
//
// Conventions: an empty input, or one containing NaN, yields NaN rather
// than an error, so a missing measurement shows up as "NaN" in a report
// instead of aborting it. Inputs are never modified. Bootstrap results are
// deterministic for a given seed (PCG from math/rand/v2), so re-rendering a
// report does not change its numbers.
package stats
