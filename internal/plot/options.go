package plot

import (
	"image/color"

	"gonum.org/v1/plot/vg"
)

// Size is the size of a chart. Use vg.Inch or vg.Centimeter multiples;
// a zero field takes the default (7in × 4in), which fits a report column.
type Size struct {
	W, H vg.Length
}

// Default chart size: wide enough for a legend beside the data, short
// enough that two charts fit on a laptop screen.
const (
	DefaultWidth  = 7 * vg.Inch
	DefaultHeight = 4 * vg.Inch
)

// Options are the few knobs the charts share. The zero value is a linear
// chart of the default size.
type Options struct {
	Size Size

	// LogX and LogY switch an axis to a logarithmic scale. Every value drawn
	// on a log axis must be positive; zeros and negatives are reported as an
	// error instead of being silently clamped. LogX applies to Lines only;
	// bar charts reject LogY because bar lengths on a log axis mislead.
	LogX, LogY bool

	// YMin, if set, lowers the y axis floor to at most this value, e.g. 0 so
	// that a line chart does not exaggerate small differences. Data below it
	// still fits: it never hides data.
	YMin *float64

	// Whiskers selects what BoxPlot's whiskers span; see Whiskers.Caption.
	Whiskers Whiskers
}

func (o Options) size() (w, h vg.Length) {
	w, h = o.Size.W, o.Size.H
	if w <= 0 {
		w = DefaultWidth
	}
	if h <= 0 {
		h = DefaultHeight
	}
	return w, h
}

// okabeIto is the Okabe & Ito (2008) palette, ordered so that neighbouring
// series (and adjacent stack layers) differ in both hue and lightness. Its
// black is replaced by a mid grey so black outlines and medians stay visible
// on it.
var okabeIto = []color.NRGBA{
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
	{R: 0x99, G: 0x99, B: 0x99, A: 0xFF}, // grey
}

// colour returns the palette colour of the i-th series. Assignment is by
// position so the same input always yields the same picture; past eight
// series the palette repeats (Lines also varies point glyphs).
func colour(i int) color.NRGBA {
	return okabeIto[i%len(okabeIto)]
}

// translucent returns c with the given opacity, for error bands.
func translucent(c color.NRGBA, alpha uint8) color.NRGBA {
	c.A = alpha
	return c
}
