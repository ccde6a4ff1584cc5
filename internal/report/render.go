package report

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
)

const css = `body{font-family:"Liberation Sans",Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc;padding-bottom:.2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right}caption{caption-side:bottom;text-align:left;font-size:.85em;color:#555;padding-top:.3em}
figure{margin:1.5em 0}figcaption{font-size:.85em;color:#555}.meta{color:#555;font-size:.9em}
.v-reproduced{color:#0a6e31;font-weight:bold}.v-not-reproduced{color:#b3261e;font-weight:bold}.v-inconclusive{color:#7a5a00;font-weight:bold}`

func renderHTML(ds *analysis.Dataset, sections []analysis.Section) []byte {
	var b bytes.Buffer
	title := ds.Study.Title
	if title == "" {
		title = ds.Study.Name
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n", esc(title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"meta\">%s</p>\n", esc(title), esc(subtitle(ds)))
	fmt.Fprint(&b, "<nav><ul>")
	for i, s := range sections {
		fmt.Fprintf(&b, "<li><a href=\"#s%d\">%s</a></li>", i, esc(s.Title))
	}
	fmt.Fprint(&b, "</ul></nav>\n")
	for i, s := range sections {
		fmt.Fprintf(&b, "<section id=\"s%d\"><h2>%s</h2>\n", i, esc(s.Title))
		for _, p := range s.Text {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(p))
		}
		if len(s.Claims) > 0 {
			claimsTableHead(&b, false)
			for _, c := range s.Claims {
				writeClaimRow(&b, "", c)
			}
			fmt.Fprint(&b, "</table>\n")
		}
		for _, t := range drawn(s.Tables) {
			fmt.Fprint(&b, "<table>")
			if t.Caption != "" {
				fmt.Fprintf(&b, "<caption>%s</caption>", esc(t.Caption))
			}
			fmt.Fprint(&b, "<tr>")
			for _, h := range t.Header {
				fmt.Fprintf(&b, "<th>%s</th>", esc(h))
			}
			fmt.Fprint(&b, "</tr>\n")
			for _, r := range t.Rows {
				fmt.Fprint(&b, "<tr>")
				for _, c := range r {
					if numeric(c) {
						fmt.Fprintf(&b, "<td class=\"num\">%s</td>", esc(c))
					} else {
						fmt.Fprintf(&b, "<td>%s</td>", esc(c))
					}
				}
				fmt.Fprint(&b, "</tr>\n")
			}
			fmt.Fprint(&b, "</table>\n")
		}
		for _, f := range s.Figures {
			fmt.Fprintf(&b, "<figure>%s<figcaption>%s</figcaption></figure>\n", svgBody(f.SVG), esc(f.Caption))
		}
		for _, d := range s.Details {
			fmt.Fprintf(&b, "<details><summary>%s</summary><ul>", esc(d.Summary))
			for _, it := range d.Items {
				fmt.Fprintf(&b, "<li>%s</li>", esc(it))
			}
			fmt.Fprint(&b, "</ul></details>\n")
		}
		fmt.Fprint(&b, "</section>\n")
	}
	fmt.Fprint(&b, "</body></html>\n")
	return b.Bytes()
}

// drawn are the tables with rows: a section's text says what a profile
// left unmeasured, and a header over nothing would only repeat it.
func drawn(tables []analysis.Table) []analysis.Table {
	return slices.DeleteFunc(slices.Clone(tables), func(t analysis.Table) bool { return len(t.Rows) == 0 })
}

// svgBody drops the XML prolog so the SVG can sit inline in HTML.
func svgBody(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		return svg[i:]
	}
	return svg
}

func renderMarkdown(ds *analysis.Dataset, sections []analysis.Section) []byte {
	var b bytes.Buffer
	title := ds.Study.Title
	if title == "" {
		title = ds.Study.Name
	}
	fmt.Fprintf(&b, "# %s\n\n%s\n\nPlots are in report.html beside this file.\n", mdLine(title), mdText(subtitle(ds)))
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## %s\n\n", mdLine(s.Title))
		for _, p := range s.Text {
			fmt.Fprintf(&b, "%s\n\n", mdText(p))
		}
		if len(s.Claims) > 0 {
			var rows [][]string
			for _, c := range s.Claims {
				cells := claimCells(c)
				cells[4] = "**" + cells[4] + "**"
				rows = append(rows, cells)
			}
			mdTable(&b, claimHeader, rows)
		}
		for _, t := range drawn(s.Tables) {
			mdTable(&b, t.Header, t.Rows)
			if t.Caption != "" {
				fmt.Fprintf(&b, "_%s_\n\n", mdLine(t.Caption))
			}
		}
		for _, d := range s.Details {
			fmt.Fprintf(&b, "%s: %s.\n\n", mdText(d.Summary), mdText(strings.Join(d.Items, ", ")))
		}
	}
	return b.Bytes()
}

// numeric reports whether a cell reads as a figure ("1.08 (0.93–1.25)",
// "−3%", "≈ 4 ms", "–" for none): figures line up on the right, words on
// the left.
func numeric(cell string) bool {
	c := strings.TrimLeft(strings.TrimSpace(cell), "+-−≈~<>≤≥ ")
	if c == "" || c == "–" {
		return cell != ""
	}
	return c[0] >= '0' && c[0] <= '9' || c[0] == '.'
}

// claimsTableHead opens a table of judged claims, with a first column
// for the study when the table spans several.
func claimsTableHead(b *bytes.Buffer, withStudy bool) {
	head := claimHeader
	if withStudy {
		head = append([]string{"study"}, head...)
	}
	fmt.Fprintf(b, "<table><tr>%s</tr>\n", strings.Join(mapStrings(head, func(h string) string { return "<th>" + esc(h) + "</th>" }), ""))
}

// writeClaimRow writes a judged claim; study fills the first column when
// the table has one.
func writeClaimRow(b *bytes.Buffer, study string, c claims.Result) {
	cells := claimCells(c)
	fmt.Fprint(b, "<tr>")
	if study != "" {
		fmt.Fprintf(b, "<td>%s</td>", esc(study))
	}
	fmt.Fprintf(b, "<td class=\"claim\">%s</td><td class=\"claim\">%s</td><td class=\"claim\">%s</td><td>%s</td><td class=\"v-%s\">%s</td><td class=\"why\">%s</td></tr>\n",
		esc(cells[0]), esc(cells[1]), esc(cells[2]), esc(cells[3]), verdictClass(c.Verdict), esc(cells[4]), esc(cells[5]))
}

var claimHeader = []string{"claim", "published", "measured here (95% CI over runs)", "holds when", "verdict", "why"}

// claimCells are a judged claim's cells, in claimHeader's order.
func claimCells(c claims.Result) []string {
	text := c.Claim.Text
	if c.Claim.Ours {
		text = "Ours: " + text
	} else if c.Claim.Source != "" {
		text += " (" + c.Claim.Source + ")"
	}
	measured := c.Measured()
	if c.Note != "" {
		measured += "; " + c.Note
	}
	return []string{text, orNone(c.Claim.Published), measured, c.Region, c.VerdictText(), c.Why}
}

// verdictClass colours a verdict: reproduced and holding findings green,
// their opposites red, the rest grey.
func verdictClass(v string) string {
	switch {
	case v == claims.Reproduced || v == claims.Holds || strings.HasPrefix(v, "explained"):
		return "reproduced"
	case v == claims.NotReproduced || v == claims.DoesNotHold:
		return "not-reproduced"
	}
	return "inconclusive"
}

// mdEscape writes the characters that start HTML as entities: Markdown
// passes HTML through, and a study's fields (a title, a claim, a variant
// value) are text, in report.md as in report.html (esc).
var mdEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func mdText(s string) string { return mdEscape.Replace(s) }

// mdLine is mdText kept on one line, for a heading, a caption or a cell.
func mdLine(s string) string { return strings.ReplaceAll(mdText(s), "\n", " ") }

func mdTable(b *bytes.Buffer, header []string, rows [][]string) {
	cell := func(s string) string { return strings.ReplaceAll(mdLine(s), "|", `\|`) }
	fmt.Fprintf(b, "| %s |\n|", strings.Join(mapStrings(header, cell), " | "))
	for range header {
		fmt.Fprint(b, " --- |")
	}
	fmt.Fprintln(b)
	for _, r := range rows {
		fmt.Fprintf(b, "| %s |\n", strings.Join(mapStrings(r, cell), " | "))
	}
	fmt.Fprintln(b)
}

func mapStrings(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func subtitle(ds *analysis.Dataset) string {
	parts := []string{}
	if ds.Study.Source != "" {
		parts = append(parts, "Source: "+ds.Study.Source)
	}
	parts = append(parts, fmt.Sprintf("Profile %s, %d repetition(s), %d variant(s). Run %s, %s.",
		orNone(ds.State.Profile), ds.Study.Repetitions, len(ds.Variants), ds.Prov.StartedAt.Format(time.RFC3339), ds.Prov.CPUModel))
	return strings.Join(parts, " · ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }
