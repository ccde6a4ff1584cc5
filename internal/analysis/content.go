package analysis

import (
	"fmt"
	"math"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/stats"
)

// Result is what an analysis computes: its sections, and the metrics the
// study's claims (claims.yaml) are judged on. An analysis supplies
// metrics, never verdicts.
type Result struct {
	Sections []Section
	Metrics  map[string]claims.Metric
}

// Section is one part of the report, rendered to HTML and Markdown alike.
type Section struct {
	Title   string
	Text    []string // paragraphs, plain text
	Claims  []claims.Result
	Tables  []Table
	Figures []Figure
	Details []Details
}

// Details is a list shown folded (in HTML a <details> element): what a
// reader may open, and need not read through.
type Details struct {
	Summary string
	Items   []string
}

// Table is a captioned grid of already formatted cells.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Figure is a captioned inline SVG.
type Figure struct {
	Caption string
	SVG     []byte
}

// NaN marks a figure that could not be measured; Num prints it as "–".
var NaN = stats.Median(nil)

// Num formats x with digits decimals.
func Num(x float64, digits int) string {
	if x != x {
		return "–"
	}
	return fmt.Sprintf("%.*f", digits, x)
}

// Pct formats a share as a percentage with one decimal.
func Pct(x float64) string { return Num(100*x, 1) + "%" }

// WithCI formats MedianCI of repetitions: the median with its own 95%
// interval, or, with 2 to 5 repetitions (too few for a median's), the
// mean with the mean's. rng is the range the quantity can take, which
// the interval is kept in; the caller must name it, as only it knows
// whether a value is a count, a share or a difference.
func WithCI(xs []float64, digits int, rng stats.Range) string {
	m, lo, hi := MedianCI(xs, rng)
	if len(xs) < 2 {
		return Num(m, digits)
	}
	return fmt.Sprintf("%s (%s–%s)", Num(m, digits), Num(lo, digits), Num(hi, digits))
}

// MedianCI is a centre of repetitions with a 95% interval of that same
// centre, never one's value with the other's interval: from 6 values
// on, the median with its order-statistic interval (stats.MedianCI);
// with 2 to 5, where no two order statistics cover the median at 95%,
// the mean with its t-interval kept in rng; with one, the value and NaN.
// What WithCI shows, for a bar and its whisker.
func MedianCI(xs []float64, rng stats.Range) (centre, lo, hi float64) {
	med, lo, hi := stats.MedianCI(xs, 0.95)
	if len(xs) < 2 || !math.IsNaN(lo) {
		return med, lo, hi
	}
	lo, hi = stats.MeanCIIn(xs, 0.95, rng)
	return stats.Mean(xs), lo, hi
}

// Float reads a number of a study's paper: section, which YAML gives as
// an int or a float.
func Float(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Floats reads a list of numbers of a study's paper: section.
func Floats(v any) []float64 {
	xs, _ := v.([]any)
	var out []float64
	for _, x := range xs {
		if f, ok := Float(x); ok {
			out = append(out, f)
		}
	}
	return out
}
