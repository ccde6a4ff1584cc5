// Package stats holds the few statistics msbench needs to compare
// benchmark results honestly: robust summaries (median, quantiles),
// confidence intervals (Student-t for means, percentile bootstrap for
// medians and for ratios of medians), the Mann-Whitney U test, and Differs,
// which turns them into a yes/no verdict with a one-line explanation.
//
// Conventions: an empty input, or one containing NaN, yields NaN rather
// than an error, so a missing measurement shows up as "NaN" in a report
// instead of aborting it. Inputs are never modified. Bootstrap results are
// deterministic for a given seed (PCG from math/rand/v2), so re-rendering a
// report does not change its numbers.
package stats
