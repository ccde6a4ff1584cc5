package plot

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// finishAxis runs after all data is on the plot: it applies the optional
// floor, gives an empty or flat range some extent (gonum would otherwise
// invent a ±1 range that puts bars below zero or breaks a log scale), and
// switches to a log scale. name ("x" or "y") is for error messages.
func finishAxis(a *plot.Axis, logScale bool, floor *float64, name string) error {
	if floor != nil {
		if !finite(*floor) {
			return fmt.Errorf("plot: %s axis floor %g is not a finite number", name, *floor)
		}
		a.Min = math.Min(a.Min, *floor)
	}
	switch {
	case math.IsInf(a.Min, +1): // no data at all
		a.Min, a.Max = 0, 1
		if logScale {
			a.Min, a.Max = 1, 10
		}
	case math.IsInf(a.Max, -1): // only a floor
		a.Max = a.Min
	}
	if logScale {
		if a.Min <= 0 {
			return fmt.Errorf("plot: log %s axis needs positive values, but its minimum is %g", name, a.Min)
		}
		if a.Min == a.Max {
			a.Min, a.Max = a.Min/math.Sqrt(10), a.Max*math.Sqrt(10)
		}
		// As on linear axes, end on labelled ticks (1, 2, 5 × 10^k, or
		// powers of ten over wide ranges) so both ends are readable.
		steps := []float64{1, 2, 5, 10}
		if math.Log10(a.Max/a.Min) > 3 {
			steps = []float64{1, 10}
		}
		a.Min, a.Max = logRound(a.Min, false, steps), logRound(a.Max, true, steps)
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.TickerFunc(logTicks)
		return nil
	}
	if a.Min == a.Max {
		if a.Min == 0 {
			a.Max = 1
		} else {
			d := math.Abs(a.Min) / 10
			a.Min, a.Max = a.Min-d, a.Max+d
		}
	}
	// End the axis on labelled ticks, so the top of the data has headroom
	// and the reader sees where the scale ends.
	if step := niceStep(a.Min, a.Max); step > 0 {
		a.Min = math.Floor(a.Min/step+1e-9) * step
		a.Max = math.Ceil(a.Max/step-1e-9) * step
	}
	a.Tick.Marker = plot.TickerFunc(linearTicks)
	return nil
}

// niceStep returns the 1, 2 or 5 × 10^k tick spacing closest (on a log
// scale) to five intervals over [lo, hi], or 0 if the range is empty or not
// finite.
func niceStep(lo, hi float64) float64 {
	raw := (hi - lo) / 5
	if !(raw > 0) || !finite(raw) {
		return 0
	}
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	best := mag
	for _, m := range []float64{2, 5, 10} {
		if math.Abs(math.Log(m*mag/raw)) < math.Abs(math.Log(best/raw)) {
			best = m * mag
		}
	}
	return best
}

// linearTicks labels every multiple of niceStep in [lo, hi]. gonum's
// default picks steps such as 2.5 and prints "12.50", which reads poorly.
func linearTicks(lo, hi float64) []plot.Tick {
	step := niceStep(lo, hi)
	if step == 0 {
		return nil
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0 // not "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v)})
	}
	return ticks
}

// logRound rounds v > 0 down (or up) to the nearest step × 10^k; steps
// must start at 1 and end at 10.
func logRound(v float64, up bool, steps []float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(v))))
	m := v / p
	if up {
		for _, s := range steps {
			if s >= m*(1-1e-9) {
				return s * p
			}
		}
		return 10 * p
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] <= m*(1+1e-9) {
			return steps[i] * p
		}
	}
	return p
}

// checkLog reports the first value that cannot be drawn on a log axis.
// NaNs are skipped like everywhere else; what names the data for the reader.
func checkLog(logScale bool, axis, what string, vs ...float64) error {
	if !logScale {
		return nil
	}
	for _, v := range vs {
		if v <= 0 {
			return fmt.Errorf("plot: log %s axis cannot show %s = %g; use a linear axis or drop non-positive values", axis, what, v)
		}
	}
	return nil
}

// logTicks labels powers of ten, and 2× and 5× steps when the range spans
// only a few decades; under one decade it falls back to linear steps, which
// would otherwise leave the axis with a single label.
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	if last-first > 3 {
		labelled = map[int]bool{1: true}
	}
	var ticks []plot.Tick
	labels := 0
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = tickLabel(v)
				labels++
			}
			ticks = append(ticks, t)
		}
	}
	if labels < 3 {
		return linearTicks(lo, hi)
	}
	return ticks
}

// tickLabel prints v without float noise (0.30000000000000004) and
// without exponents for the magnitudes latencies and rates have.
func tickLabel(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e7) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}
