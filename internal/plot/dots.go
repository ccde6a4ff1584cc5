package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// refStyle draws the reference value of a dot chart: dashed and grey, so
// it reads as a guide, not as data.
var refStyle = draw.LineStyle{Color: color.Gray{Y: 0x55}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

// Guide is what a dot chart draws besides its data.
type Guide struct {
	// Ref, when not nil, is drawn as a dashed line across the chart (1
	// for a ratio: no difference), and the axis always reaches it.
	Ref *float64
	// Lo and Hi, when Hi > Lo, are as far as a whisker is drawn: one
	// reaching past is cut there and left without its cap, so that one
	// interval spanning 10⁻⁴ to 10⁹ does not flatten every other. Points
	// are never cut.
	Lo, Hi float64
}

// Dots draws, for each category, one point per series side by side with
// its interval (Low, High) as a whisker: a dot-and-whisker (forest) chart
// of estimates, such as ratios of two systems. Unlike a bar, a point does
// not claim a length from zero, so a log y axis (Options.LogY) is allowed,
// where ratios of 0.5 and 2 lie equally far from 1. NaN values skip the
// point; an infinite or NaN end skips the whisker.
func Dots(title, yLabel string, categories []string, series []Series, guide Guide, opts Options) ([]byte, error) {
	ch := newChart(title, "", yLabel, opts)
	var s shapes
	for k, ser := range series {
		if err := checkSeries(ser, len(categories)); err != nil {
			return nil, err
		}
		glyph := draw.GlyphStyle{Color: colour(k), Radius: vg.Points(3.2), Shape: glyphs[k%len(glyphs)]}
		ch.addLegend(ser.Name, dotThumb{glyph})
		whisker := draw.LineStyle{Color: colour(k), Width: vg.Points(1.4)}
		for i, v := range ser.Values {
			if !finite(v) {
				continue
			}
			what := fmt.Sprintf("%q in %q", ser.Name, categories[i])
			if err := checkLog(opts.LogY, "y", what, v); err != nil {
				return nil, err
			}
			x, half := slot(i, k, len(series), 0.7)
			if ser.Low != nil && finite(ser.Low[i]) && finite(ser.High[i]) {
				if err := checkLog(opts.LogY, "y", what+" interval", ser.Low[i], ser.High[i]); err != nil {
					return nil, err
				}
				s.whisker(x, ser.Low[i], ser.High[i], half/3, whisker, guide)
			}
			s.marks = append(s.marks, mark{x, v, glyph})
		}
	}
	ch.nominalX(categories)
	ch.p.X.Padding = vg.Points(4)
	if len(s.marks) == 0 {
		ch.empty = true
	} else {
		if ref := guide.Ref; ref != nil {
			if !finite(*ref) {
				return nil, fmt.Errorf("plot: reference value %g is not a finite number", *ref)
			}
			if err := checkLog(opts.LogY, "y", "the reference value", *ref); err != nil {
				return nil, err
			}
			// Under the marks, which Plot draws after segments.
			s.segs = append([]segment{{-0.5, *ref, float64(len(categories)) - 0.5, *ref, refStyle}}, s.segs...)
		}
		ch.p.Add(&s)
	}
	if err := finishAxis(&ch.p.Y, opts.LogY, opts.YMin, "y"); err != nil {
		return nil, err
	}
	return ch.render()
}

// whisker is errorBar cut to the guide's window: an end past it stops at
// the window's edge, without a cap, so it reads as going on.
func (s *shapes) whisker(x, lo, hi, capHalf float64, style draw.LineStyle, g Guide) {
	if g.Hi <= g.Lo {
		s.errorBar(x, lo, hi, capHalf, style)
		return
	}
	cutLo, cutHi := max(lo, g.Lo), min(hi, g.Hi)
	s.segs = append(s.segs, segment{x, cutLo, x, cutHi, style})
	if cutLo == lo {
		s.segs = append(s.segs, segment{x - capHalf, lo, x + capHalf, lo, style})
	}
	if cutHi == hi {
		s.segs = append(s.segs, segment{x - capHalf, hi, x + capHalf, hi, style})
	}
}

// dotThumb is a legend thumbnail for a point series: its glyph.
type dotThumb struct{ glyph draw.GlyphStyle }

func (d dotThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(d.glyph, c.Center()) }
