package stats

import (
	"fmt"
	"math"
	"strconv"
)

// Differs' bootstrap settings: fixed so a report's verdicts never change
// between renderings, and few enough resamples to stay fast on raw samples
// of 100k values.
const (
	differsResamples = 2000
	differsSeed      = 1
)

// Differs says whether a and b differ for real at the given confidence
// level (e.g. 0.95), and why, in one line such as
//
//	median 1.84× (95% CI 1.71–1.97), p < 0.001
//
// where 1.84× is median(a)/median(b). A difference counts as real only if
// both the bootstrap interval of the ratio of medians excludes 1 and the
// Mann-Whitney test gives p < 1 − level: the interval says how big the
// difference is, the test guards against an interval that is too narrow
// by chance. Otherwise the line starts with "no clear difference". Fewer
// than 8 values on either side add a note that p is approximate.
func Differs(a, b []float64, level float64) (real bool, why string) {
	if !validLevel(level) {
		return false, fmt.Sprintf("invalid confidence level %g: want a value between 0 and 1, e.g. 0.95", level)
	}
	if len(a) < 2 || len(b) < 2 {
		return false, fmt.Sprintf("not enough data to compare (n = %d vs %d)", len(a), len(b))
	}
	ratio, lo, hi := RatioCI(a, b, level, differsResamples, differsSeed)
	_, p := MannWhitney(a, b)
	if math.IsNaN(ratio) || math.IsNaN(p) {
		return false, "cannot compare: the data contains NaN or a median that is not positive"
	}
	real = (lo > 1 || hi < 1) && p < 1-level
	why = fmt.Sprintf("median %s× (%s%% CI %s–%s), %s",
		sig3(ratio), percent(level), sig3(lo), sig3(hi), pValue(p))
	if !real {
		why = "no clear difference: " + why
	}
	if n := min(len(a), len(b)); n < 8 {
		why += fmt.Sprintf(" (n = %d vs %d: p is approximate)", len(a), len(b))
	}
	return real, why
}

// sig3 prints a ratio with three significant digits and no exponent.
func sig3(x float64) string {
	if math.IsInf(x, 1) {
		return "∞"
	}
	if x == 0 {
		return "0"
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(x)))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// percent prints a level as a percentage: 0.95 → "95", 0.999 → "99.9".
func percent(level float64) string {
	return strconv.FormatFloat(math.Round(level*1e4)/100, 'f', -1, 64)
}

func pValue(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return "p = " + strconv.FormatFloat(p, 'g', 2, 64)
}
