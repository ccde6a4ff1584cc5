package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/runner"
	"github.com/msbench/msbench/internal/study"
)

// TestReportOfARealRun carries out the runner's tiny study and renders it.
func TestReportOfARealRun(t *testing.T) {
	root, _ := filepath.Abs("../..")
	s, err := study.Load("../runner/testdata/tiny.yaml", "healthy")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dir, err := runner.Run(context.Background(), s, runner.Options{
		Root: root, ResultsRoot: t.TempDir(), CacheDir: filepath.Join(t.TempDir(), "cache"), DataDir: t.TempDir(), Log: &log,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	path, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{"<svg", "Step closed", "Step open", "Provenance", "cgroup", "closed: latency"} {
		if !strings.Contains(html, want) && !(want == "cgroup" && strings.Contains(html, "proc")) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched when the page opens.
	for _, bad := range []string{"<script src", "<link", "src=\"http", "href=\"http"} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html refers to the network: %q", bad)
		}
	}
	dec := xml.NewDecoder(strings.NewReader(strings.TrimPrefix(html, "<!DOCTYPE html>\n")))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "| variant | reps |") {
		t.Fatalf("report.md: %v\n%s", err, md)
	}
}
