package plot

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Box is one distribution summarised by quantiles. msbench keeps HDR
// histograms rather than raw samples, so boxes are drawn from these
// precomputed values instead of being computed here.
type Box struct {
	Series                       string // legend entry; one colour per series
	Min, P25, P50, P75, P99, Max float64
	N                            int // samples behind the quantiles; printed as "n=…" when > 0
}

// BoxGroup is one position on the x axis, e.g. one framework or one load
// level, holding a box per series.
type BoxGroup struct {
	Label string
	Boxes []Box
}

// Whiskers chooses what a box plot's whiskers span. Latency distributions
// have a long upper tail, so the default keeps P99 on the whisker and marks
// the maximum separately: one slow outlier then cannot stretch the whisker.
type Whiskers int

const (
	// WhiskersMinP99: whiskers from Min to P99, a ring marks Max.
	WhiskersMinP99 Whiskers = iota
	// WhiskersMinMax: whiskers from Min to Max.
	WhiskersMinMax
)

// Caption explains the box plot encoding, for the report text under the
// chart.
func (w Whiskers) Caption() string {
	const box = "Boxes span P25–P75 with a line at the median (P50); "
	if w == WhiskersMinMax {
		return box + "whiskers reach from the minimum to the maximum."
	}
	return box + "whiskers reach from the minimum to P99; a ring marks the maximum."
}

// ends returns the whisker ends for b, and whether the maximum gets its own
// mark.
func (w Whiskers) ends(b Box) (lo, hi float64, markMax bool) {
	if w == WhiskersMinMax {
		return b.Min, b.Max, false
	}
	return b.Min, b.P99, !math.IsNaN(b.Max) && b.Max > b.P99
}

// BoxPlot draws grouped box plots: one slot per group on the x axis, one
// box per series within it, in the order series first appear. A box whose
// P25, P50 or P75 is NaN is skipped; NaN whisker ends are not drawn.
// Quantiles out of order are an error, as they mean the input is corrupt.
// See Whiskers.Caption for the text that explains the chart.
func BoxPlot(title, yLabel string, groups []BoxGroup, opts Options) ([]byte, error) {
	ch := newChart(title, "", yLabel, opts)
	labels := make([]string, len(groups))
	seriesIdx := map[string]int{}
	for g, grp := range groups {
		labels[g] = grp.Label
		for _, b := range grp.Boxes {
			if _, ok := seriesIdx[b.Series]; !ok {
				seriesIdx[b.Series] = len(seriesIdx)
				ch.addLegend(b.Series, swatch{colour(seriesIdx[b.Series])})
			}
		}
	}
	var s shapes
	for g, grp := range groups {
		for _, b := range grp.Boxes {
			if math.IsNaN(b.P25) || math.IsNaN(b.P50) || math.IsNaN(b.P75) {
				continue
			}
			where := fmt.Sprintf("box %q/%q", grp.Label, b.Series)
			if err := checkBox(b, where, opts); err != nil {
				return nil, err
			}
			i := seriesIdx[b.Series]
			x, half := slot(g, i, len(seriesIdx), 0.8)
			s.addBox(b, x, half, i, opts.Whiskers)
		}
	}
	ch.nominalX(labels)
	ch.p.X.Padding = vg.Points(4) // unlike bars, boxes do not stand on the axis
	if len(s.rects) == 0 {
		ch.empty = true
	} else {
		ch.p.Add(&s)
	}
	if err := finishAxis(&ch.p.Y, opts.LogY, opts.YMin, "y"); err != nil {
		return nil, err
	}
	return ch.render()
}

// checkBox rejects quantiles that are out of order or cannot go on a log
// axis; NaN fields are ignored (they are simply not drawn).
func checkBox(b Box, where string, opts Options) error {
	lo, hi, _ := opts.Whiskers.ends(b)
	seq := []float64{lo, b.P25, b.P50, b.P75, hi, b.Max}
	prev := math.Inf(-1)
	for _, v := range seq {
		if math.IsNaN(v) {
			continue
		}
		if v < prev {
			return fmt.Errorf("plot: %s: quantiles out of order (min, P25, P50, P75, whisker, max = %v)", where, seq)
		}
		prev = v
	}
	return checkLog(opts.LogY, "y", where, seq...)
}

func (s *shapes) addBox(b Box, x, half float64, series int, w Whiskers) {
	s.rects = append(s.rects, rect{x - half, x + half, b.P25, b.P75, colour(series)})
	median := draw.LineStyle{Color: outline.Color, Width: vg.Points(2)}
	s.segs = append(s.segs, segment{x - half, b.P50, x + half, b.P50, median})
	lo, hi, markMax := w.ends(b)
	capHalf := half / 2
	top := b.P75
	if !math.IsNaN(lo) && lo < b.P25 {
		s.segs = append(s.segs,
			segment{x, lo, x, b.P25, whiskerStyle},
			segment{x - capHalf, lo, x + capHalf, lo, whiskerStyle})
	}
	if !math.IsNaN(hi) && hi > b.P75 {
		s.segs = append(s.segs,
			segment{x, b.P75, x, hi, whiskerStyle},
			segment{x - capHalf, hi, x + capHalf, hi, whiskerStyle})
		top = hi
	}
	if markMax {
		s.marks = append(s.marks, mark{x, b.Max, draw.GlyphStyle{
			Color: whiskerStyle.Color, Radius: vg.Points(2.2), Shape: draw.RingGlyph{},
		}})
		top = b.Max
	}
	if b.N > 0 {
		ts := textStyle(sans, noteSize, noteColour)
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YBottom
		s.notes = append(s.notes, note{x, top, vg.Points(3), "n=" + count(b.N), ts})
	}
}

// count prints a sample count compactly so it fits over a narrow box.
func count(n int) string {
	switch {
	case n >= 10_000_000:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 10_000:
		return strconv.Itoa(n/1000) + "k"
	default:
		return strconv.Itoa(n)
	}
}
