// Package toolchain says whether this machine has what a study's services
// need to be built and run: programs on PATH, and a JDK of a given major
// version where the studies' build scripts look for one. An API test asks
// before it deploys, to skip what cannot run here with the reason instead
// of failing in the middle of a build.
package toolchain

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// JVMDir is where the studies' scripts (jdk.sh) look for a JDK: a
// directory whose name holds the major version, with bin/java and
// bin/javac.
var JVMDir = "/usr/lib/jvm"

// Missing says what is missing of tools (programs looked up in PATH) and,
// with jdk > 0, a JDK of that major version; "" when nothing is.
func Missing(jdk int, tools ...string) string {
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (not on PATH)")
		}
	}
	if jdk > 0 && !haveJDK(jdk) {
		missing = append(missing, fmt.Sprintf("a JDK %d (none under %s/*%d* with bin/java and bin/javac)", jdk, JVMDir, jdk))
	}
	return strings.Join(missing, ", ")
}

func haveJDK(major int) bool {
	dirs, _ := filepath.Glob(filepath.Join(JVMDir, fmt.Sprintf("*%d*", major))) // the pattern is well formed
	for _, d := range dirs {
		if executable(filepath.Join(d, "bin", "java")) && executable(filepath.Join(d, "bin", "javac")) {
			return true
		}
	}
	return false
}

func executable(path string) bool {
	_, err := exec.LookPath(path)
	return err == nil
}
