// Command gen writes the frameworks study's stand-in dataset (package
// dataset) to the file it is given, indented as the shared file is.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/msbench/msbench/studies/frameworks/dataset"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen OUT.json")
		os.Exit(2)
	}
	data, err := json.MarshalIndent(dataset.Generate(), "", "  ")
	if err == nil {
		err = os.WriteFile(os.Args[1], data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
