package compare

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/msbench/msbench/internal/metrics/summarymetric"
)

// WriteText prints the report as a table per compared step and variant,
// then the --fail-if results.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	if r.Base.Source != "" {
		fmt.Fprintf(&b, "BASE  %s\nNEW   %s\nboth measured in %s\n", r.Base.Source, r.New.Source, r.Base.Dir)
	} else {
		fmt.Fprintf(&b, "BASE  %s (%s)\nNEW   %s (%s)\n", r.Base.Dir, r.Base.Kind, r.New.Dir, r.New.Kind)
	}
	for _, side := range []struct {
		name string
		s    Side
	}{{"BASE", r.Base}, {"NEW", r.New}} {
		for _, n := range side.s.Notes {
			fmt.Fprintf(&b, "  %s lacks: %s\n", side.name, n)
		}
	}
	if n := r.Noise; n != nil {
		fmt.Fprintf(&b, "NOISE %s (%s): run-to-run spread between two deployments of one system, from %d A/A pair%s\n", n.Dir, n.Kind, n.Pairs, plural(n.Pairs))
		for _, s := range n.Spreads {
			fmt.Fprintf(&b, "  %s: σ %s (95%% CI %s–%s, %d degrees of freedom)\n", s.Metric, spreadText(s, s.Sigma), spreadText(s, s.Lo), spreadText(s, s.Hi), s.DF)
		}
		for _, note := range n.Notes {
			fmt.Fprintf(&b, "  note: %s\n", note)
		}
	}
	for _, note := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	for _, c := range r.Comparisons {
		fmt.Fprintf(&b, "\n%s — %s: %s\n", c.Label(), c.Method, c.MethodDetail)
		rows := [][]string{{"metric", "BASE", "NEW", "NEW/BASE", pct(r.Level) + "% CI", "n", "verdict"}}
		for _, m := range c.Metrics {
			change, ci := changeText(m.Change, m.Estimate), ciText(m.Change, m.Lo, m.Hi)
			if math.IsNaN(float64(m.Lo)) {
				ci = "–"
			}
			rows = append(rows, []string{metricLabel(m), value(m, m.Base), value(m, m.New), change, ci,
				fmt.Sprintf("%d+%d %s", m.BaseN, m.NewN, nUnit(m.NUnit)), m.Verdict})
		}
		table(&b, rows, "lrrrrll")
		for _, wn := range c.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", wn)
		}
	}
	if g := r.Gate; g != nil {
		fmt.Fprintf(&b, "\ngate: %d test%s (each --fail-if rule on each comparison it reads), each at one-sided %s%% (Bonferroni): a build no worse than every limit fails with probability at most %s%%\n",
			g.Tests, plural(g.Tests), pct(g.TestLevel), pct(g.Alpha))
		if g.Unknown > 0 {
			fmt.Fprintf(&b, "gate: %d of the %d tests have no bounded interval at that level and cannot fail: give the sides more runs\n", g.Unknown, g.Tests)
		}
		seen := map[string]bool{}
		for _, res := range r.FailIf {
			if seen[res.Rule] {
				continue
			}
			seen[res.Rule] = true
			var breaches []string
			checked, unknown := 0, 0
			for _, other := range r.FailIf {
				if other.Rule == res.Rule {
					checked++
					if other.Unknown {
						unknown++
					}
					if other.Breached {
						breaches = append(breaches, other.describe(r.Level, g))
					}
				}
			}
			if len(breaches) == 0 {
				blind := ""
				if unknown > 0 {
					blind = fmt.Sprintf("; %d unknown", unknown)
				}
				fmt.Fprintf(&b, "fail-if %s: passed (%d comparison%s%s)\n", res.Rule, checked, plural(checked), blind)
				continue
			}
			fmt.Fprintf(&b, "fail-if %s: FAILED in %d of %d comparison%s\n", res.Rule, len(breaches), checked, plural(checked))
			for _, br := range breaches {
				fmt.Fprintf(&b, "  %s\n", br)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// metricLabel names a figure with its unit, except a share, whose values
// are printed as percentages.
func metricLabel(m MetricResult) string {
	if m.Unit == summarymetric.Share {
		return m.Metric
	}
	return m.Metric + " " + string(m.Unit)
}

func nUnit(u string) string {
	switch u {
	case "requests":
		return "req"
	case "intervals":
		return "intervals"
	}
	return u
}

// value prints a side's value: 4 significant digits, or a percentage for
// an error share.
func value(m MetricResult, x Num) string {
	f := float64(x)
	switch {
	case m.Unit == summarymetric.Share:
		return percent(f, 2, "%")
	case math.IsNaN(f):
		return "–"
	}
	return sig4(f)
}

// percent prints a share ×100 with the given decimals and unit, "–" for
// NaN.
func percent(f float64, decimals int, unit string) string {
	if math.IsNaN(f) {
		return "–"
	}
	return strconv.FormatFloat(100*f, 'f', decimals, 64) + unit
}

func sig4(x float64) string {
	if x == 0 || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	decimals := max(0, 3-int(math.Floor(math.Log10(math.Abs(x)))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// changeText prints NEW/BASE as a ratio, or NEW − BASE in points for a
// difference.
func changeText(c summarymetric.Change, x Num) string {
	if c == summarymetric.Difference {
		return points(float64(x))
	}
	return ratio3(float64(x)) + "×"
}

// ciText prints an interval as changeText prints its ends.
func ciText(c summarymetric.Change, lo, hi Num) string {
	if c == summarymetric.Difference {
		return points(float64(lo)) + " to " + points(float64(hi))
	}
	return ratio3(float64(lo)) + "–" + ratio3(float64(hi)) + "×"
}

// spreadText prints a run-to-run spread: of logs as a percentage (σ 0.1
// is about ±10%), of error shares in points.
func spreadText(s NoiseSpread, x Num) string {
	if s.Scale == "value" {
		return percent(float64(x), 2, " pp")
	}
	return percent(float64(x), 1, "%")
}

// ratio3 prints a ratio with three decimals.
func ratio3(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "−∞"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// points prints a difference of shares in percentage points, signed.
func points(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 0):
		return ratio3(x)
	}
	s := strconv.FormatFloat(100*x, 'f', 2, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + " pp"
}

// pct prints a level as a percentage: 0.95 → "95".
func pct(level float64) string {
	return strconv.FormatFloat(math.Round(level*1e4)/100, 'f', -1, 64)
}

// table prints rows indented by two spaces, each column padded to its
// widest cell, aligned left (l) or right (r) as align says.
func table(b *strings.Builder, rows [][]string, align string) {
	widths := make([]int, len(align))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			line.WriteString("  ")
			if align[i] == 'r' {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
