package plot

import (
	"math"
	"strings"
	"testing"
)

func TestDots(t *testing.T) {
	one, nan, inf := 1.0, math.NaN(), math.Inf(1)
	cats := []string{"p50", "p99", "throughput"}
	good := []Series{
		{Name: "b", Values: []float64{1.2, 1.4, 0.8}, Low: []float64{1.1, 1.0, nan}, High: []float64{1.3, 2.0, nan}},
		{Name: "c", Values: []float64{0.9, nan, 1}, Low: []float64{0.85, nan, 0.9}, High: []float64{0.95, nan, inf}},
	}
	cases := []struct {
		name    string
		series  []Series
		ref     *float64
		opts    Options
		wantErr string
	}{
		{"linear with reference", good, &one, Options{}, ""},
		{"log with reference", good, &one, Options{LogY: true}, ""},
		{"no reference", good, nil, Options{}, ""},
		{"nothing drawn", []Series{{Name: "b", Values: []float64{nan, nan, nan}}}, &one, Options{}, ""},
		{"zero on log", []Series{{Name: "b", Values: []float64{0, 1, 1}}}, &one, Options{LogY: true}, "log y axis"},
		{"zero low end on log", []Series{{Name: "b", Values: []float64{1, 1, 1}, Low: []float64{0, 1, 1}, High: []float64{2, 1, 1}}}, nil, Options{LogY: true}, "interval"},
		{"reference off a log axis", good, ptrTo(-1.0), Options{LogY: true}, "reference"},
		{"reference infinite", good, &inf, Options{}, "not a finite number"},
		{"length mismatch", []Series{{Name: "b", Values: []float64{1}}}, &one, Options{}, "want 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svg, err := Dots("Ratios", "ratio to a", cats, c.series, Guide{Ref: c.ref}, c.opts)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg)
			text := svgText(t, svg)
			if !strings.Contains(text, "Ratios") || strings.Contains(text, "no data") != (c.name == "nothing drawn") {
				t.Errorf("SVG text %q", text)
			}
		})
	}
}

// The reference value is on the axis even when every interval lies on
// one side of it: a reader must see how far from 1 the ratios are.
func TestDotsAxisReachesTheReference(t *testing.T) {
	one := 1.0
	svg, err := Dots("Far", "ratio", []string{"p50"}, []Series{{Name: "b", Values: []float64{3}, Low: []float64{2.5}, High: []float64{3.5}}}, Guide{Ref: &one}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "dots.svg", svg)
	if text := svgText(t, svg); !strings.Contains(text, "\n1\n") {
		t.Errorf("the axis does not reach the reference 1: ticks %q", text)
	}
}

func ptrTo(v float64) *float64 { return &v }

// A whisker past the guide's window is cut at its edge, capless, and the
// axis fits the window, not the whisker; a point outside stays drawn.
func TestDotsCutWhiskers(t *testing.T) {
	one := 1.0
	series := []Series{{Name: "b", Values: []float64{1.2, 0.3}, Low: []float64{1e-4, 0.25}, High: []float64{1e9, 0.35}}}
	svg, err := Dots("Cut", "ratio", []string{"p50", "p99"}, series, Guide{Ref: &one, Lo: 0.5, Hi: 2}, Options{LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "dots_cut.svg", svg)
	text := svgText(t, svg)
	if strings.Contains(text, "1e+09") || strings.Contains(text, "1e-04") || !strings.Contains(text, "\n0.2\n") {
		t.Errorf("the axis does not fit the window and the point below it: ticks %q", text)
	}
	var s shapes
	s.whisker(0, 1e-4, 1e9, 0.1, whiskerStyle, Guide{Lo: 0.5, Hi: 2})
	if len(s.segs) != 1 || s.segs[0].y0 != 0.5 || s.segs[0].y1 != 2 {
		t.Errorf("a whisker past both edges: %+v, want one capless segment from 0.5 to 2", s.segs)
	}
	s = shapes{}
	s.whisker(0, 0.8, 3, 0.1, whiskerStyle, Guide{Lo: 0.5, Hi: 2})
	if len(s.segs) != 2 || s.segs[1].y0 != 0.8 {
		t.Errorf("a whisker past the top only: %+v, want the segment and the bottom cap", s.segs)
	}
}
