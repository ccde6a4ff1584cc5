package report

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/results"
)

// IndexFile is the index of every study's latest run in a results folder.
const IndexFile = "index.html"

// Index writes root/index.html: for every study with a run in root (its
// latest), the question, a link to its report, and one table of every
// claim of every study with the published figure, ours with its interval
// and n, and the verdict. It returns the page's path.
func Index(root string, opts Options) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "*"))
	if err != nil {
		return "", err
	}
	latest := map[string]*analysis.Dataset{}
	var problems []string
	for _, dir := range dirs {
		if results.Check(dir) != nil {
			continue // not a run directory
		}
		ds, err := analysis.Load(dir)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", filepath.Base(dir), err))
			continue
		}
		if old, ok := latest[ds.Study.Name]; !ok || ds.Prov.StartedAt.After(old.Prov.StartedAt) {
			latest[ds.Study.Name] = ds
		}
	}
	if len(latest) == 0 {
		return "", fmt.Errorf("%s: no msbench run directories", root)
	}
	studies := make([]*analysis.Dataset, 0, len(latest))
	for _, ds := range latest {
		studies = append(studies, ds)
	}
	slices.SortFunc(studies, func(a, b *analysis.Dataset) int { return cmp.Compare(a.Study.Name, b.Study.Name) })

	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>msbench: every study</title><style>%s</style></head><body>\n", css)
	fmt.Fprint(&b, "<h1>msbench: every study, every claim</h1>\n<p class=\"meta\">The latest run of each study in this folder. Verdicts come from each study's claims file, judged on one metric per run with its 95% interval over the runs; with fewer than 3 runs a verdict is provisional. A study run once has no runs to spread: its intervals come from its A/A twin's noise model, marked so beside the verdict, and a metric the model does not cover gets no decisive verdict. Claims of an extreme are judged on every pairwise comparison they imply (Bonferroni), their number beside the verdict. Claims marked Ours are questions the papers did not ask.</p>\n")
	fmt.Fprint(&b, "<table><tr><th>study</th><th>question</th><th>run</th><th>report</th></tr>\n")
	for _, ds := range studies {
		rel, _ := filepath.Rel(root, results.ReportHTML(ds.Dir))
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s, %d repetition(s)</td><td><a href=\"%s\">report</a></td></tr>\n",
			esc(ds.Study.Name), esc(ds.Study.Title), esc(filepath.Base(ds.Dir)), ds.Study.Repetitions, esc(rel))
	}
	fmt.Fprint(&b, "</table>\n<h2>Claims</h2>\n")
	claimsTableHead(&b, true)
	for _, ds := range studies {
		_, judged := studySections(ds, opts)
		for _, c := range judged {
			writeClaimRow(&b, ds.Study.Name, c)
		}
	}
	fmt.Fprint(&b, "</table>\n")
	if len(problems) > 0 {
		fmt.Fprint(&b, "<h2>Run directories that could not be read</h2><ul>")
		for _, p := range problems {
			fmt.Fprintf(&b, "<li>%s</li>", esc(p))
		}
		fmt.Fprint(&b, "</ul>\n")
	}
	fmt.Fprint(&b, "</body></html>\n")
	path := filepath.Join(root, IndexFile)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	return path, results.WriteFile(path, b.Bytes())
}
