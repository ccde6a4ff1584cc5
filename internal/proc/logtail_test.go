package proc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/proc"
)

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("x", 100<<10) + "\nlast\n"
	tests := []struct {
		name string
		path string
		n    int
		want string
	}{
		{"last lines", write("a", "1\n2\n3\n4\n5\n"), 2, "4\n5"},
		{"fewer lines than n", write("b", "only\n"), 10, "only"},
		{"no trailing newline", write("c", "1\n2"), 1, "2"},
		{"empty", write("d", ""), 3, ""},
		{"huge file reads only the end", write("e", long), 5, "last"},
		{"zero lines", write("f", "1\n"), 0, ""},
		{"missing", filepath.Join(dir, "nope"), 3, "(log unavailable: open " + filepath.Join(dir, "nope") + ": no such file or directory)"},
		{"no path", "", 3, "(no log file)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := proc.LogTail(tt.path, tt.n); got != tt.want {
				t.Errorf("LogTail = %q, want %q", got, tt.want)
			}
		})
	}
}
