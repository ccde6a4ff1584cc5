package plot

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// shapes is a small plotter of primitives in data coordinates. gonum's own
// BoxPlot computes quartiles from raw values and its BarChart cannot skip a
// NaN or carry error bars, so boxes from precomputed quantiles, grouped and
// stacked bars are all assembled from these primitives instead.
type shapes struct {
	rects []rect
	segs  []segment
	marks []mark
	notes []note
}

type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
}

type segment struct {
	x0, y0, x1, y1 float64
	style          draw.LineStyle
}

type mark struct {
	x, y  float64
	glyph draw.GlyphStyle
}

// note is a small text label anchored at a data point, e.g. a sample count.
type note struct {
	x, y  float64
	dy    vg.Length // lift above the anchor, so text clears a mark there
	text  string
	style text.Style
}

var (
	outline      = draw.LineStyle{Color: color.Gray{Y: 0x22}, Width: vg.Points(0.6)}
	whiskerStyle = draw.LineStyle{Color: color.Gray{Y: 0x22}, Width: vg.Points(1)}
)

func (s *shapes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range s.rects {
		pts := []vg.Point{
			{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y0)},
			{X: trX(r.x1), Y: trY(r.y1)}, {X: trX(r.x0), Y: trY(r.y1)},
		}
		c.FillPolygon(r.fill, pts)
		c.StrokeLines(outline, append(pts, pts[0]))
	}
	for _, l := range s.segs {
		c.StrokeLine2(l.style, trX(l.x0), trY(l.y0), trX(l.x1), trY(l.y1))
	}
	for _, m := range s.marks {
		c.DrawGlyph(m.glyph, vg.Point{X: trX(m.x), Y: trY(m.y)})
	}
	for _, n := range s.notes {
		c.FillText(n.style, vg.Point{X: trX(n.x), Y: trY(n.y) + n.dy}, n.text)
	}
}

// DataRange makes the axes fit every primitive; notes are covered by
// GlyphBoxes instead because their size is in points, not data units.
func (s *shapes) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	add := func(x, y float64) {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
	}
	for _, r := range s.rects {
		add(r.x0, r.y0)
		add(r.x1, r.y1)
	}
	for _, l := range s.segs {
		add(l.x0, l.y0)
		add(l.x1, l.y1)
	}
	for _, m := range s.marks {
		add(m.x, m.y)
	}
	return xmin, xmax, ymin, ymax
}

// GlyphBoxes reserves room for marks and notes so gonum pads the data area
// rather than clipping them at the edge.
func (s *shapes) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	var boxes []plot.GlyphBox
	for _, m := range s.marks {
		r := m.glyph.Radius
		boxes = append(boxes, plot.GlyphBox{
			X: p.X.Norm(m.x), Y: p.Y.Norm(m.y),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}},
		})
	}
	for _, n := range s.notes {
		boxes = append(boxes, plot.GlyphBox{
			X: p.X.Norm(n.x), Y: p.Y.Norm(n.y),
			Rectangle: n.style.Rectangle(n.text).Add(vg.Point{Y: n.dy}),
		})
	}
	return boxes
}

// swatch is a legend thumbnail for filled shapes (boxes and bars).
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}
	c.FillPolygon(s.fill, pts)
	c.StrokeLines(outline, append(pts, pts[0]))
}

// slot places member i of n side by side within a category at x = group,
// the members sharing width (in category units). It returns the centre
// and half-width of the member, leaving a small gap between neighbours.
func slot(group, i, n int, width float64) (centre, half float64) {
	each := width / float64(n)
	centre = float64(group) - width/2 + (float64(i)+0.5)*each
	return centre, each / 2 * 0.88
}

// errorBar adds a vertical interval with caps, as used for confidence
// intervals on bars and points; NaN ends mean there is nothing to draw.
func (s *shapes) errorBar(x, lo, hi, capHalf float64, style draw.LineStyle) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return
	}
	s.segs = append(s.segs,
		segment{x, lo, x, hi, style},
		segment{x - capHalf, lo, x + capHalf, lo, style},
		segment{x - capHalf, hi, x + capHalf, hi, style},
	)
}
