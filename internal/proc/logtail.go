package proc

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// tailBytes bounds how much of a log LogTail reads: error messages want the
// last lines, not a multi-megabyte read of a chatty server's log.
const tailBytes = 64 << 10

// LogTail returns the last n lines of the file at path, for error messages.
// It never fails: problems are described in the returned text.
func LogTail(path string, n int) string {
	if n <= 0 {
		return ""
	}
	if path == "" {
		return "(no log file)"
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	start := max(info.Size()-tailBytes, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, start, info.Size()-start))
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if start > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line was cut by the byte bound
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
