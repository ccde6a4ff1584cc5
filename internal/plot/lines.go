package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// XYSeries is one line. Low and High, if non-nil, bound each point (same
// length as X and Y): drawn as a translucent band, or as error bars when
// Points is set. Dashed distinguishes e.g. published figures drawn beside
// measured ones. Points with a NaN coordinate are skipped.
type XYSeries struct {
	Name      string
	X, Y      []float64
	Low, High []float64
	Dashed    bool
	Points    bool
	// Like names an earlier series whose colour this one takes, so that a
	// published curve (Dashed) reads as the twin of the measured one.
	Like string
}

// glyphs back up colour with shape, so point series stay distinguishable
// in greyscale print and past the eighth series, where colours repeat.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{},
	draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{},
}

// Lines draws x/y series such as latency against offered load, with
// optional log axes (Options.LogX, Options.LogY).
func Lines(title, xLabel, yLabel string, series []XYSeries, opts Options) ([]byte, error) {
	ch := newChart(title, xLabel, yLabel, opts)
	var under, over []plot.Plotter // bands go under every line
	colours := map[string]int{}
	next := 0
	for k, s := range series {
		c, ok := colours[s.Like]
		if s.Like == "" || !ok {
			c, next = next, next+1
		}
		colours[s.Name] = c
		band, line, thumbs, err := xyPlotters(k, c, s, opts)
		if err != nil {
			return nil, err
		}
		under = append(under, band...)
		over = append(over, line...)
		ch.addLegend(s.Name, thumbs...)
	}
	ch.p.Add(under...)
	ch.p.Add(over...)
	ch.empty = len(over) == 0
	if err := finishAxis(&ch.p.X, opts.LogX, nil, "x"); err != nil {
		return nil, err
	}
	if err := finishAxis(&ch.p.Y, opts.LogY, opts.YMin, "y"); err != nil {
		return nil, err
	}
	return ch.render()
}

// xyPlotters builds the gonum plotters for series k, drawn in palette
// colour c: its band (if any), its line, points and error bars, and the
// legend thumbnails.
func xyPlotters(k, c int, s XYSeries, opts Options) (band, line []plot.Plotter, thumbs []plot.Thumbnailer, err error) {
	if err := sameLen(s.Name, "Y values", len(s.Y), len(s.X)); err != nil {
		return nil, nil, nil, err
	}
	bounded := s.Low != nil || s.High != nil
	if bounded {
		if err := checkSeries(Series{Name: s.Name, Values: s.Y, Low: s.Low, High: s.High}, len(s.X)); err != nil {
			return nil, nil, nil, err
		}
	}
	var xys, bxys plotter.XYs
	var errs plotter.YErrors
	var lows, highs []float64
	for i := range s.X {
		x, y := s.X[i], s.Y[i]
		if math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		what := fmt.Sprintf("%q point %d", s.Name, i)
		if err := checkLog(opts.LogX, "x", what, x); err != nil {
			return nil, nil, nil, err
		}
		if err := checkLog(opts.LogY, "y", what, y); err != nil {
			return nil, nil, nil, err
		}
		if !finite(x) || !finite(y) {
			return nil, nil, nil, fmt.Errorf("plot: %s is infinite", what)
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
		if !bounded || !finite(s.Low[i]) || !finite(s.High[i]) {
			continue
		}
		if err := checkLog(opts.LogY, "y", what+" bound", s.Low[i], s.High[i]); err != nil {
			return nil, nil, nil, err
		}
		bxys = append(bxys, plotter.XY{X: x, Y: y})
		lows, highs = append(lows, s.Low[i]), append(highs, s.High[i])
		errs = append(errs, struct{ Low, High float64 }{y - s.Low[i], s.High[i] - y})
	}

	col := colour(c)
	ls := draw.LineStyle{Color: col, Width: vg.Points(1.8)}
	if s.Dashed {
		ls.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	l := &plotter.Line{XYs: xys, LineStyle: ls}
	thumbs = []plot.Thumbnailer{l}
	if len(xys) == 0 {
		return nil, nil, thumbs, nil
	}
	line = []plot.Plotter{l}
	if s.Points || len(xys) == 1 { // a lone point has no line to show it
		sc := &plotter.Scatter{XYs: xys, GlyphStyle: draw.GlyphStyle{
			Color: col, Radius: vg.Points(2.6), Shape: glyphs[k%len(glyphs)],
		}}
		line = append(line, sc)
		thumbs = append(thumbs, sc)
	}
	if len(bxys) == 0 {
		return nil, line, thumbs, nil
	}
	if s.Points {
		eb := &plotter.YErrorBars{XYs: bxys, YErrors: errs, CapWidth: vg.Points(6),
			LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}}
		return nil, append(line, eb), thumbs, nil
	}
	return []plot.Plotter{bandPolygon(bxys, lows, highs, col)}, line, thumbs, nil
}

// bandPolygon outlines the region between lows and highs along the x
// values of xys: forward along the lows, back along the highs.
func bandPolygon(xys plotter.XYs, lows, highs []float64, c color.NRGBA) *plotter.Polygon {
	ring := make(plotter.XYs, 0, 2*len(xys))
	for i := range xys {
		ring = append(ring, plotter.XY{X: xys[i].X, Y: lows[i]})
	}
	for i := len(xys) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: xys[i].X, Y: highs[i]})
	}
	return &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: translucent(c, 0x40)}
}
