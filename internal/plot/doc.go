// Package plot renders the charts of msbench's HTML and Markdown reports as
// self-contained SVG documents.
//
// It is a thin layer over gonum.org/v1/plot that fixes the choices a report
// needs to make once: a sans-serif font large enough to read when the SVG is
// inlined at its natural size, the Okabe-Ito colour-blind-safe palette handed
// out by series position (so pass series in the same order in every chart and
// a framework keeps its colour), a legend outside the data area so it never
// hides a bar or a box, and x tick labels that rotate when categories crowd.
//
// Inputs are plain data structs: the package knows nothing about msbench's
// results, so report code converts HDR-histogram quantiles, stage timings or
// sweeps into [Box], [Layer], [Series] and [XYSeries] values.
//
// Every chart function returns the SVG bytes or an error; expected problems
// (mismatched lengths, non-positive values on a log axis) are errors, empty
// input is a valid chart that says "no data", and NaN values are skipped.
// The output references no network resource: text uses the font family
// "Liberation Sans" with Arial and the generic sans-serif as fallbacks, which
// share its metrics closely enough that the layout computed here holds.
package plot
