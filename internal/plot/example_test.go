package plot

import (
	"os"
	"path/filepath"
	"testing"
)

// writeSVG stores a rendered example in the test's temp dir, or in
// $MSBENCH_PLOT_DIR when set, so a person can look at the charts.
func writeSVG(t *testing.T, name string, svg []byte) {
	t.Helper()
	dir := os.Getenv("MSBENCH_PLOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg)
	t.Logf("wrote %s (%d bytes)", path, len(svg))
}

func TestExampleBoxPlot(t *testing.T) {
	box := func(series string, scale float64, n int) Box {
		return Box{Series: series, Min: 0.21 * scale, P25: 0.42 * scale, P50: 0.5 * scale,
			P75: 0.63 * scale, P99: 1.4 * scale, Max: 3.1 * scale, N: n}
	}
	groups := []BoxGroup{
		{Label: "100 rps", Boxes: []Box{box("fasthttp", 1, 6000), box("net/http", 1.3, 6000), box("gRPC", 1.8, 6000)}},
		{Label: "1k rps", Boxes: []Box{box("fasthttp", 1.1, 60000), box("net/http", 1.5, 60000), box("gRPC", 2.2, 60000)}},
		{Label: "10k rps", Boxes: []Box{box("fasthttp", 1.6, 600000), box("net/http", 2.9, 600000), box("gRPC", 4.1, 600000)}},
	}
	svg, err := BoxPlot("Request latency by offered load", "latency (ms)", groups, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "boxplot.svg", svg)
	svg, err = BoxPlot("Request latency by offered load (log)", "latency (ms)", groups,
		Options{LogY: true, Whiskers: WhiskersMinMax})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "boxplot_log.svg", svg)
}

func TestExampleStackedBars(t *testing.T) {
	cats := []string{"fasthttp", "net/http", "gin", "echo", "gRPC", "connect-go", "twirp", "actix (rust)", "spring-boot", "express.js"}
	layers := []Layer{
		{Name: "network", Values: []float64{42, 44, 43, 45, 40, 41, 44, 39, 47, 46}},
		{Name: "handler overhead", Values: []float64{8, 19, 23, 21, 35, 31, 27, 6, 88, 64}},
		{Name: "RPC round trip", Values: []float64{0, 0, 0, 0, 61, 58, 55, 0, 0, 0}},
		{Name: "function", Values: []float64{120, 121, 119, 122, 120, 118, 121, 95, 160, 240}},
		{Name: "response delta", Values: []float64{3, 6, 7, 6, 9, 8, 8, 2, 15, 12}},
	}
	svg, err := StackedBars("Where a request's time goes", "median time per request (µs)", cats, layers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "stacked.svg", svg)
}

func TestExampleGroupedBars(t *testing.T) {
	cats := []string{"GET /user", "POST /order", "GET /search"}
	series := []Series{
		{Name: "fasthttp", Values: []float64{48.2, 31.5, 12.1}, Low: []float64{46.9, 30.2, 11.4}, High: []float64{49.1, 32.8, 12.9}},
		{Name: "net/http", Values: []float64{39.7, 27.0, 10.3}, Low: []float64{38.1, 25.9, 9.9}, High: []float64{41.0, 28.4, 10.8}},
		{Name: "gRPC", Values: []float64{35.1, 29.9, 9.2}, Low: []float64{33.8, 28.7, 8.5}, High: []float64{36.5, 31.2, 9.8}},
		{Name: "spring-boot", Values: []float64{22.4, 18.3, 6.1}, Low: []float64{21.0, 17.2, 5.5}, High: []float64{23.9, 19.6, 6.6}},
	}
	svg, err := GroupedBars("Throughput at 50 ms P99 budget", "throughput (k req/s)", cats, series, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "grouped.svg", svg)
}

func TestExampleLines(t *testing.T) {
	x := []float64{100, 200, 500, 1000, 2000, 5000, 10000, 20000}
	measured := XYSeries{Name: "fasthttp (measured)", X: x,
		Y:   []float64{0.31, 0.32, 0.33, 0.36, 0.41, 0.62, 1.3, 4.8},
		Low: []float64{0.29, 0.3, 0.31, 0.33, 0.38, 0.55, 1.1, 3.9}, High: []float64{0.33, 0.34, 0.36, 0.39, 0.45, 0.7, 1.6, 5.9}}
	published := XYSeries{Name: "fasthttp (published)", X: x,
		Y: []float64{0.28, 0.29, 0.3, 0.32, 0.36, 0.5, 0.9, 2.9}, Dashed: true}
	nethttp := XYSeries{Name: "net/http (measured)", X: x, Points: true,
		Y:   []float64{0.4, 0.41, 0.44, 0.5, 0.62, 1.1, 2.7, 9.5},
		Low: []float64{0.37, 0.38, 0.41, 0.46, 0.57, 1.0, 2.3, 8.1}, High: []float64{0.43, 0.44, 0.48, 0.55, 0.69, 1.25, 3.1, 11.2}}
	series := []XYSeries{measured, published, nethttp}
	svg, err := Lines("P99 latency against offered load", "offered load (req/s)", "P99 latency (ms)", series,
		Options{LogX: true, LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "lines_log.svg", svg)
	zero := 0.0
	svg, err = Lines("P99 latency against offered load", "offered load (req/s)", "P99 latency (ms)", series[:2],
		Options{YMin: &zero})
	if err != nil {
		t.Fatal(err)
	}
	writeSVG(t, "lines.svg", svg)
}
