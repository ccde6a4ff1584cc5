package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Fonts: gonum measures text with the embedded Liberation fonts; Liberation
// Sans is metric-compatible with Arial, so the fallback list written into the
// SVG (see sansFallback) keeps labels where the layout put them.
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

const (
	titleSize  = 13
	labelSize  = 11
	tickSize   = 9.5
	legendSize = 10
	noteSize   = 7.5
)

var (
	margin    = vg.Points(8)
	legendGap = vg.Points(12)
	// yAxisGuess is how wide the y axis (label and tick labels) is assumed
	// to be when deciding whether x tick labels must rotate.
	yAxisGuess = 0.8 * vg.Inch
	gridStyle  = draw.LineStyle{Color: color.Gray{Y: 0xDD}, Width: vg.Points(0.5)}
	noteColour = color.Gray{Y: 0x55}
)

// chart collects a gonum plot plus the legend, which is drawn outside the
// plot's data area by render.
type chart struct {
	title      string
	opts       Options
	p          *plot.Plot
	grid       *plotter.Grid
	legend     plot.Legend
	entries    int
	categories []string // nominal x axis labels, if any
	empty      bool     // nothing was drawn: say "no data"
}

func newChart(title, xLabel, yLabel string, opts Options) *chart {
	p := plot.New()
	p.BackgroundColor = nil // render paints the whole canvas
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Label.Padding = vg.Points(4)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Tick.Length = vg.Points(4)
		a.Color = color.Gray{Y: 0x44}
		a.Tick.Color = color.Gray{Y: 0x44}
	}
	grid := plotter.NewGrid()
	grid.Horizontal = gridStyle
	grid.Vertical = gridStyle
	p.Add(grid)

	legend := plot.NewLegend()
	legend.TextStyle.Font = font.From(sans, legendSize)
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(3)
	legend.ThumbnailWidth = vg.Points(18)
	return &chart{title: title, opts: opts, p: p, grid: grid, legend: legend}
}

// addLegend adds a legend entry; render shows the legend only when there
// is more than one entry, since a lone series is named by the title.
func (ch *chart) addLegend(name string, thumbs ...plot.Thumbnailer) {
	ch.legend.Add(name, thumbs...)
	ch.entries++
}

// nominalX makes the x axis categorical: category i sits at x = i.
func (ch *chart) nominalX(categories []string) {
	ch.categories = categories
	ch.p.X.Min, ch.p.X.Max = -0.5, float64(len(categories))-0.5
	ch.p.X.Padding = 0
	ch.p.Y.Padding = 0
	ch.p.X.Tick.Length = 0
	ticks := make(plot.ConstantTicks, len(categories))
	for i, c := range categories {
		ticks[i] = plot.Tick{Value: float64(i), Label: c}
	}
	ch.p.X.Tick.Marker = ticks
	ch.grid.Vertical = draw.LineStyle{} // lines through the bars only add noise
}

// rotateX tilts the x tick labels when they would not fit side by side in
// the width one category gets.
func (ch *chart) rotateX(plotWidth vg.Length) {
	if len(ch.categories) == 0 {
		return
	}
	sty := ch.p.X.Tick.Label
	var widest vg.Length
	for _, c := range ch.categories {
		widest = max(widest, sty.Width(c))
	}
	slot := plotWidth / vg.Length(len(ch.categories))
	if widest <= 0.9*slot {
		return
	}
	sty.Rotation = math.Pi / 6
	if widest*vg.Length(math.Cos(sty.Rotation)) > 0.9*slot {
		sty.Rotation = math.Pi / 4
	}
	// Anchor the label's top-right corner under its category, so the tilted
	// text hangs down and to the left, clear of the axis.
	sty.XAlign = draw.XRight
	sty.YAlign = draw.YTop
	ch.p.X.Tick.Label = sty
	ch.p.Add(labelRoom{ch.categories, sty})
}

// labelRoom reserves horizontal room for tilted x tick labels: gonum pads
// the data area for plotters' glyphs on the left, but not for the axis's
// own labels, so the first label would run off the canvas.
type labelRoom struct {
	labels []string
	style  text.Style
}

func (labelRoom) Plot(draw.Canvas, *plot.Plot) {}

func (r labelRoom) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, len(r.labels))
	for i, l := range r.labels {
		rect := r.style.Rectangle(l)
		rect.Min.Y, rect.Max.Y = 0, 0 // the x axis already makes room below
		boxes[i] = plot.GlyphBox{X: p.X.Norm(float64(i)), Rectangle: rect}
	}
	return boxes
}

// render lays the chart out on an SVG canvas: title across the full width,
// legend in a column on the right, plot in the rest.
func (ch *chart) render() (out []byte, err error) {
	defer func() {
		// gonum panics on some inputs we do not foresee; a report should
		// lose one chart, not the whole run.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plot: rendering %q: %v", ch.title, r)
		}
	}()
	if ch.empty {
		ch.p.Add(noData{})
	}
	w, h := ch.opts.size()
	cv := vgsvg.NewWith(vgsvg.UseWH(w, h))
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc = draw.Crop(dc, margin, -margin, margin, -margin)

	if ch.title != "" {
		ts := textStyle(sansBold, titleSize, color.Black)
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ts, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, ch.title)
		dc.Max.Y -= ts.Height(ch.title) + vg.Points(8)
	}
	area := dc
	if ch.entries > 1 {
		lw := ch.legend.Rectangle(dc).Size().X
		area.Max.X -= lw + legendGap
		legendArea := dc
		legendArea.Min.X = area.Max.X + legendGap
		ch.legend.Draw(legendArea)
	}
	ch.rotateX(area.Size().X - yAxisGuess)
	ch.p.Draw(area)

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot: writing SVG for %q: %w", ch.title, err)
	}
	return sansFallback(buf.Bytes()), nil
}

// sansFallback gives the SVG's font-family a fallback list: without it a
// browser lacking Liberation Sans would fall back to its default serif font.
func sansFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg,
		[]byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

func textStyle(f font.Font, size font.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    font.From(f, size),
		Handler: plot.DefaultTextHandler,
	}
}

// noData marks an empty chart so a reader does not mistake it for a
// rendering bug.
type noData struct{}

func (noData) Plot(c draw.Canvas, _ *plot.Plot) {
	ts := textStyle(sans, labelSize, noteColour)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YCenter
	c.FillText(ts, c.Center(), "no data")
}
