package plot

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Layer is one stage of a stacked bar, e.g. "network" or "handler", with
// one value per category. Zero and NaN values draw nothing.
type Layer struct {
	Name   string
	Values []float64
}

// Series is one bar per category. Low and High, if non-nil, are the ends
// of an error bar (e.g. a 95% confidence interval) and have the same length
// as Values; NaN ends omit that error bar.
type Series struct {
	Name      string
	Values    []float64
	Low, High []float64
}

var errBarsLog = errors.New("plot: bar charts need a linear y axis: bar lengths on a log axis mislead")

// StackedBars draws one bar per category built from layers stacked bottom
// to top in the given order, e.g. the per-stage latency breakdown of a
// request per framework. Values must be non-negative: a negative stage has
// no place in a stack.
func StackedBars(title, yLabel string, categories []string, layers []Layer, opts Options) ([]byte, error) {
	if opts.LogY {
		return nil, errBarsLog
	}
	ch := newChart(title, "", yLabel, opts)
	var s shapes
	base := make([]float64, len(categories))
	for l, layer := range layers {
		if err := sameLen(layer.Name, "values", len(layer.Values), len(categories)); err != nil {
			return nil, err
		}
		for i, v := range layer.Values {
			if v < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("plot: layer %q, category %q: value %g cannot be stacked", layer.Name, categories[i], v)
			}
			if math.IsNaN(v) || v == 0 {
				continue
			}
			s.rects = append(s.rects, rect{float64(i) - 0.3, float64(i) + 0.3, base[i], base[i] + v, colour(l)})
			base[i] += v
		}
	}
	// Legend top to bottom in the order the layers appear in the stack.
	for l := len(layers) - 1; l >= 0; l-- {
		ch.addLegend(layers[l].Name, swatch{colour(l)})
	}
	return ch.bars(categories, &s)
}

// GroupedBars draws, for each category, one bar per series side by side,
// with optional error bars. NaN values skip the bar.
func GroupedBars(title, yLabel string, categories []string, series []Series, opts Options) ([]byte, error) {
	if opts.LogY {
		return nil, errBarsLog
	}
	ch := newChart(title, "", yLabel, opts)
	var s shapes
	errStyle := draw.LineStyle{Color: outline.Color, Width: vg.Points(1)}
	for k, ser := range series {
		if err := checkSeries(ser, len(categories)); err != nil {
			return nil, err
		}
		ch.addLegend(ser.Name, swatch{colour(k)})
		for i, v := range ser.Values {
			if !finite(v) {
				continue
			}
			x, half := slot(i, k, len(series), 0.8)
			s.rects = append(s.rects, rect{x - half, x + half, 0, v, colour(k)})
			if ser.Low != nil {
				s.errorBar(x, ser.Low[i], ser.High[i], half/2, errStyle)
			}
		}
	}
	return ch.bars(categories, &s)
}

// bars finishes both bar charts: nominal categories, a zero baseline and
// the "no data" note when nothing non-zero was drawn.
func (ch *chart) bars(categories []string, s *shapes) ([]byte, error) {
	ch.nominalX(categories)
	if len(s.rects) == 0 {
		ch.empty = true
	} else {
		ch.p.Add(s)
	}
	zero := 0.0
	floor := &zero
	if ch.opts.YMin != nil {
		floor = ch.opts.YMin
	}
	if err := finishAxis(&ch.p.Y, false, floor, "y"); err != nil {
		return nil, err
	}
	return ch.render()
}

func checkSeries(s Series, n int) error {
	if err := sameLen(s.Name, "values", len(s.Values), n); err != nil {
		return err
	}
	if (s.Low == nil) != (s.High == nil) {
		return fmt.Errorf("plot: series %q: set both Low and High or neither", s.Name)
	}
	if s.Low == nil {
		return nil
	}
	if err := sameLen(s.Name, "Low", len(s.Low), n); err != nil {
		return err
	}
	return sameLen(s.Name, "High", len(s.High), n)
}

func sameLen(name, field string, got, want int) error {
	if got != want {
		return fmt.Errorf("plot: %q has %d %s, want %d (one per point or category)", name, got, field, want)
	}
	return nil
}
