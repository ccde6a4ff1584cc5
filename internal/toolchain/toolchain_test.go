package toolchain

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMissing(t *testing.T) {
	jvm := t.TempDir()
	for _, f := range []string{"jdk-25/bin/java", "jdk-25/bin/javac", "jre-21/bin/java"} {
		path := filepath.Join(jvm, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	was := JVMDir
	JVMDir = jvm
	t.Cleanup(func() { JVMDir = was })
	for _, c := range []struct {
		name  string
		jdk   int
		tools []string
		want  string
	}{
		{"all there", 25, []string{"sh"}, ""},
		{"no tools asked", 0, nil, ""},
		{"a tool missing", 0, []string{"sh", "no-such-tool-msbench"}, "no-such-tool-msbench (not on PATH)"},
		{"a JRE is no JDK", 21, nil, "a JDK 21 (none under " + jvm + "/*21* with bin/java and bin/javac)"},
		{"both", 17, []string{"no-such-tool-msbench"}, "no-such-tool-msbench (not on PATH), a JDK 17 (none under " + jvm + "/*17* with bin/java and bin/javac)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Missing(c.jdk, c.tools...); got != c.want {
				t.Errorf("Missing(%d, %v) = %q, want %q", c.jdk, c.tools, got, c.want)
			}
		})
	}
}
