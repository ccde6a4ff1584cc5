// Package checkout finds the msbench checkout a command runs in: the
// directory whose go.mod is msbench's, holding studies/ and
// tools/.
package checkout

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is msbench's module path, which marks the checkout's go.mod.
const Module = "github.com/msbench/msbench"

// Root returns given made absolute, or, when given is empty, the nearest
// directory at or above the working directory whose go.mod is msbench's.
func Root(given string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no msbench checkout (go.mod of module %s) in %s or above", Module, wd)
		}
	}
}

func isRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == Module
		}
	}
	return false
}
