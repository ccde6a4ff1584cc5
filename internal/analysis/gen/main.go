// Command gen writes cmd/msbench/analyses.go, which links every study's
// analysis into msbench; see analysis.ImportsFile.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/msbench/msbench/internal/analysis"
)

func main() {
	studies := flag.String("studies", "../../studies", "the studies folder")
	out := flag.String("out", "analyses.go", "the file to write")
	flag.Parse()
	src, err := analysis.ImportsFile(*studies, "github.com/msbench/msbench")
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
