package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// checkSVG asserts that svg is well-formed XML with an <svg> root and
// references nothing on the network except XML namespace URIs.
func checkSVG(t *testing.T, svg []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element is %q, want svg", root)
	}
	for _, m := range urlRE.FindAll(svg, -1) {
		switch string(m) {
		case "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink":
		default:
			t.Errorf("SVG references %s", m)
		}
	}
}

var urlRE = regexp.MustCompile(`(?i)(https?:)?//[^\s"'<>)]+`)

// chartCase renders one chart; names are the legend entries it must show.
type chartCase struct {
	name   string
	title  string
	legend []string
	render func() ([]byte, error)
}

func sampleCharts() []chartCase {
	boxes := []BoxGroup{
		{Label: "a & b", Boxes: []Box{
			{Series: "fast<http>", Min: 1, P25: 2, P50: 3, P75: 4, P99: 8, Max: 9, N: 100},
			{Series: "slow", Min: 2, P25: 3, P50: 4, P75: 6, P99: 10, Max: 10, N: 100},
		}},
		{Label: "c", Boxes: []Box{{Series: "slow", Min: 2, P25: 3, P50: 4, P75: 6, P99: 10, Max: 12}}},
	}
	cats := []string{"x", "y", "z"}
	return []chartCase{
		{"box", "Box & whiskers", []string{"fast<http>", "slow"}, func() ([]byte, error) {
			return BoxPlot("Box & whiskers", "latency (ms)", boxes, Options{})
		}},
		{"box-log", "Box log", []string{"fast<http>", "slow"}, func() ([]byte, error) {
			return BoxPlot("Box log", "latency (ms)", boxes, Options{LogY: true, Whiskers: WhiskersMinMax})
		}},
		{"stacked", "Stages", []string{"network", "handler"}, func() ([]byte, error) {
			return StackedBars("Stages", "time (µs)", cats, []Layer{
				{Name: "network", Values: []float64{1, 2, 0}},
				{Name: "handler", Values: []float64{3, math.NaN(), 1}},
			}, Options{})
		}},
		{"grouped", "Throughput", []string{"one", "two"}, func() ([]byte, error) {
			return GroupedBars("Throughput", "req/s", cats, []Series{
				{Name: "one", Values: []float64{1, 2, 3}, Low: []float64{0.5, math.NaN(), 2}, High: []float64{1.5, 2.5, 4}},
				{Name: "two", Values: []float64{2, math.NaN(), 1}},
			}, Options{Size: Size{W: 12 * vg.Centimeter, H: 8 * vg.Centimeter}})
		}},
		{"lines", "Sweep", []string{"measured", "published"}, func() ([]byte, error) {
			return Lines("Sweep", "load (req/s)", "P99 (ms)", []XYSeries{
				{Name: "measured", X: []float64{1, 10, 100}, Y: []float64{1, 2, 8}, Low: []float64{0.5, 1.5, 7}, High: []float64{1.5, 2.5, 9}},
				{Name: "published", X: []float64{1, 10, math.NaN()}, Y: []float64{1, 3, 4}, Dashed: true, Points: true},
			}, Options{LogX: true, LogY: true})
		}},
	}
}

func TestChartsRenderValidSVG(t *testing.T) {
	for _, c := range sampleCharts() {
		t.Run(c.name, func(t *testing.T) {
			svg, err := c.render()
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg)
			text := svgText(t, svg)
			for _, want := range append([]string{c.title}, c.legend...) {
				if !strings.Contains(text, want) {
					t.Errorf("SVG text lacks %q", want)
				}
			}
			again, err := c.render()
			if err != nil || !bytes.Equal(svg, again) {
				t.Errorf("same input rendered differently (err %v)", err)
			}
		})
	}
}

// svgText returns the character data of all <text> elements, unescaped.
func svgText(t *testing.T, svg []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var sb strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if cd, ok := tok.(xml.CharData); ok {
			sb.Write(cd)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func TestSingleSeriesHasNoLegend(t *testing.T) {
	svg, err := GroupedBars("Only", "req/s", []string{"a"}, []Series{{Name: "lonely-series", Values: []float64{3}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(svgText(t, svg), "lonely-series") {
		t.Error("a single series should not get a legend")
	}
}

func TestFontHasFallback(t *testing.T) {
	svg, err := Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(svg, []byte("font-family:Liberation Sans;")) || !bytes.Contains(svg, []byte("sans-serif")) {
		t.Error("font-family lacks a sans-serif fallback")
	}
}

func TestManyCategoriesRotateLabels(t *testing.T) {
	var cats []string
	var vals []float64
	for i := range 14 {
		cats = append(cats, fmt.Sprintf("framework-number-%d", i))
		vals = append(vals, float64(i+1))
	}
	svg, err := GroupedBars("Crowded", "req/s", cats, []Series{{Name: "a", Values: vals}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "crowded.svg", svg)
	if !bytes.Contains(svg, []byte("rotate(")) {
		t.Error("crowded x tick labels were not rotated")
	}
}

// Degenerate input must give an error or a valid chart, never a panic.
func TestDegenerateInputs(t *testing.T) {
	nan := math.NaN()
	neg := -1.0
	cases := []struct {
		name    string
		wantErr bool
		render  func() ([]byte, error)
	}{
		{"box nil", false, func() ([]byte, error) { return BoxPlot("", "", nil, Options{}) }},
		{"box nil log", false, func() ([]byte, error) { return BoxPlot("t", "y", nil, Options{LogY: true}) }},
		{"box empty groups", false, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a"}, {Label: "b"}}, Options{})
		}},
		{"box all NaN", false, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a", Boxes: []Box{{Series: "s", P25: nan, P50: nan, P75: nan}}}}, Options{})
		}},
		{"box all zero", false, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a", Boxes: []Box{{Series: "s"}}}}, Options{})
		}},
		{"box zero on log", true, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a", Boxes: []Box{{Series: "s", P25: 1, P50: 2, P75: 3, P99: 4, Max: 5}}}}, Options{LogY: true})
		}},
		{"box out of order", true, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a", Boxes: []Box{{Series: "s", Min: 1, P25: 3, P50: 2, P75: 4, P99: 5, Max: 6}}}}, Options{})
		}},
		{"box NaN whiskers", false, func() ([]byte, error) {
			return BoxPlot("t", "y", []BoxGroup{{Label: "a", Boxes: []Box{{Series: "s", Min: nan, P25: 3, P50: 4, P75: 5, P99: nan, Max: nan}}}}, Options{LogY: true})
		}},
		{"stacked nil", false, func() ([]byte, error) { return StackedBars("t", "y", nil, nil, Options{}) }},
		{"stacked all zero", false, func() ([]byte, error) {
			return StackedBars("t", "y", []string{"a", "b"}, []Layer{{Name: "l", Values: []float64{0, 0}}}, Options{})
		}},
		{"stacked negative", true, func() ([]byte, error) {
			return StackedBars("t", "y", []string{"a"}, []Layer{{Name: "l", Values: []float64{-1}}}, Options{})
		}},
		{"stacked short", true, func() ([]byte, error) {
			return StackedBars("t", "y", []string{"a", "b"}, []Layer{{Name: "l", Values: []float64{1}}}, Options{})
		}},
		{"stacked log", true, func() ([]byte, error) {
			return StackedBars("t", "y", []string{"a"}, []Layer{{Name: "l", Values: []float64{1}}}, Options{LogY: true})
		}},
		{"grouped categories only", false, func() ([]byte, error) {
			return GroupedBars("t", "y", []string{"a", "b"}, nil, Options{})
		}},
		{"grouped all NaN", false, func() ([]byte, error) {
			return GroupedBars("t", "y", []string{"a"}, []Series{{Name: "s", Values: []float64{nan}}}, Options{})
		}},
		{"grouped negative", false, func() ([]byte, error) {
			return GroupedBars("t", "y", []string{"a", "b"}, []Series{{Name: "s", Values: []float64{-2, 3}}}, Options{})
		}},
		{"grouped low without high", true, func() ([]byte, error) {
			return GroupedBars("t", "y", []string{"a"}, []Series{{Name: "s", Values: []float64{1}, Low: []float64{0}}}, Options{})
		}},
		{"grouped YMin NaN", true, func() ([]byte, error) {
			return GroupedBars("t", "y", []string{"a"}, []Series{{Name: "s", Values: []float64{1}}}, Options{YMin: &nan})
		}},
		{"lines nil", false, func() ([]byte, error) { return Lines("t", "x", "y", nil, Options{LogX: true, LogY: true}) }},
		{"lines empty series", false, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a"}, {Name: "b"}}, Options{})
		}},
		{"lines single point", false, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{3}, Y: []float64{3}}}, Options{LogY: true})
		}},
		{"lines all zero", false, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{0, 0}, Y: []float64{0, 0}}}, Options{})
		}},
		{"lines zero on log", true, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}, Options{LogX: true})
		}},
		{"lines low zero on log", true, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{1}, Y: []float64{1}, Low: []float64{0}, High: []float64{2}}}, Options{LogY: true})
		}},
		{"lines negative YMin on log", true, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{1}, Y: []float64{1}}}, Options{LogY: true, YMin: &neg})
		}},
		{"lines infinite", true, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{1}, Y: []float64{math.Inf(1)}}}, Options{})
		}},
		{"lines length mismatch", true, func() ([]byte, error) {
			return Lines("t", "x", "y", []XYSeries{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}, Options{})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svg, err := c.render()
			if c.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				t.Logf("error: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg)
		})
	}
}

func TestEmptyChartSaysNoData(t *testing.T) {
	svg, err := BoxPlot("Nothing yet", "latency (ms)", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "empty.svg", svg)
	if !strings.Contains(svgText(t, svg), "no data") {
		t.Error(`empty chart lacks "no data"`)
	}
}

func TestWhiskersCaption(t *testing.T) {
	if !strings.Contains(WhiskersMinP99.Caption(), "P99") || !strings.Contains(WhiskersMinMax.Caption(), "maximum") {
		t.Error("captions do not name the whisker ends")
	}
}

func TestLogRound(t *testing.T) {
	steps := []float64{1, 2, 5, 10}
	cases := []struct {
		v    float64
		up   bool
		want float64
	}{{0.21, false, 0.2}, {0.19, false, 0.1}, {12.7, true, 20}, {5, true, 5}, {5.1, true, 10}, {0.003, false, 0.002}}
	for _, c := range cases {
		if got := logRound(c.v, c.up, steps); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("logRound(%g, up=%v) = %g, want %g", c.v, c.up, got, c.want)
		}
	}
}

func TestTicks(t *testing.T) {
	label := func(ts []plot.Tick) []string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	cases := []struct {
		lo, hi float64
		log    bool
		want   string
	}{
		{0, 50, false, "0 10 20 30 40 50"},
		{0, 0.6, false, "0 0.1 0.2 0.3 0.4 0.5 0.6"},
		{0.1, 1000, true, "0.1 1 10 100 1000"},
		{1, 100, true, "1 2 5 10 20 50 100"},
		{2, 8, true, "2 3 4 5 6 7 8"}, // under a decade: linear steps
	}
	for _, c := range cases {
		f := linearTicks
		if c.log {
			f = logTicks
		}
		if got := strings.Join(label(f(c.lo, c.hi)), " "); got != c.want {
			t.Errorf("ticks(%g, %g, log=%v) = %q, want %q", c.lo, c.hi, c.log, got, c.want)
		}
	}
}

func TestLinesLikeSharesTheColour(t *testing.T) {
	measured := XYSeries{Name: "measured", X: []float64{1, 2}, Y: []float64{1, 2}}
	published := XYSeries{Name: "published", X: []float64{1, 2}, Y: []float64{2, 3}, Dashed: true}
	second := okabeIto[1]
	hex := fmt.Sprintf("#%02X%02X%02X", second.R, second.G, second.B)
	own, err := Lines("t", "x", "y", []XYSeries{measured, published}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	published.Like = "measured"
	twin, err := Lines("t", "x", "y", []XYSeries{measured, published}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToUpper(string(own)), hex) {
		t.Fatalf("the second series should have the second colour %s", hex)
	}
	if strings.Contains(strings.ToUpper(string(twin)), hex) {
		t.Fatalf("a series Like the first still uses the second colour %s", hex)
	}
}
