package report

import (
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/study"
)

// Text from a study's files is text in report.md as in report.html: no
// field can inject HTML, and none breaks a table's row.
func TestMarkdownEscapesStudyText(t *testing.T) {
	const script, img = "<script>alert(1)</script>", `<img src=x onerror="alert(2)">`
	ds := &analysis.Dataset{Study: &study.Study{Name: "x", Title: script + "\n# not a heading", Source: img}}
	sections := []analysis.Section{{
		Title:  "Step " + script,
		Text:   []string{"the question: " + img},
		Claims: []claims.Result{{Claim: claims.Claim{Text: script, Source: img, Published: "a | b"}, Region: img, Verdict: claims.Reproduced, Why: "x\ny"}},
		Tables: []analysis.Table{{
			Header:  []string{"variant", "p50"},
			Rows:    [][]string{{script, "1|2"}, {"a\n| b | c", img}},
			Caption: img + "\nnext",
		}},
	}}
	md := string(renderMarkdown(ds, sections))
	for _, bad := range []string{"<script", "<img", "\n# not a heading"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md carries %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(md, `&lt;img src=x onerror="alert(2)"&gt;`) {
		t.Errorf("report.md lost the fields' text:\n%s", md)
	}
	// Every row of a table has its header's columns: a pipe in a cell is
	// escaped, a newline kept off the row.
	for _, table := range []struct{ head string }{{"| claim |"}, {"| variant |"}} {
		at := strings.Index(md, table.head)
		if at < 0 {
			t.Fatalf("no table %q:\n%s", table.head, md)
		}
		lines := strings.Split(md[at:strings.Index(md[at:], "\n\n")+at], "\n")
		want := columns(lines[0])
		for _, l := range lines[1:] {
			if columns(l) != want {
				t.Errorf("row %q has %d columns, the header %d", l, columns(l), want)
			}
		}
	}
}

// columns counts a Markdown table row's cells: its pipes not escaped.
func columns(row string) int {
	return strings.Count(row, "|") - strings.Count(row, `\|`) - 1
}

// Figures line up on the right, words on the left, whichever column they
// are in.
func TestNumericCells(t *testing.T) {
	for cell, want := range map[string]bool{
		"1.08 (0.93–1.25)": true,
		"−3%":              true,
		"+12.5%":           true,
		"≈ 4 ms":           true,
		"< 1":              true,
		".5":               true,
		"–":                true,
		"":                 false,
		"inproc/redis":     false,
		"users-50":         false,
		"yes":              false,
		"27 in 3 repetition(s), 6 degrees of freedom": true,
		"p50 ratio": false,
	} {
		if got := numeric(cell); got != want {
			t.Errorf("numeric(%q) = %v, want %v", cell, got, want)
		}
	}
}

// A table with no rows (its steps skipped by the profile) is not drawn,
// in either report; one with rows beside it is.
func TestEmptyTablesAreNotDrawn(t *testing.T) {
	ds := &analysis.Dataset{Study: &study.Study{Name: "x"}}
	sections := []analysis.Section{{
		Title: "Knee",
		Text:  []string{"Not measured in this run: rate-10 (every variant)."},
		Tables: []analysis.Table{
			{Header: []string{"empty-head"}, Caption: "empty-caption"},
			{Header: []string{"full-head"}, Rows: [][]string{{"1"}}, Caption: "full-caption"},
		},
	}}
	for name, out := range map[string]string{"report.md": string(renderMarkdown(ds, sections)), "report.html": string(renderHTML(ds, sections))} {
		if strings.Contains(out, "empty-head") || strings.Contains(out, "empty-caption") {
			t.Errorf("%s draws the table with no rows:\n%s", name, out)
		}
		if !strings.Contains(out, "full-head") || !strings.Contains(out, "full-caption") {
			t.Errorf("%s lost the table with rows:\n%s", name, out)
		}
	}
}
