package fanout

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/msbench/msbench/internal/load"
)

// progressPrefix marks a progress line among a generator's stderr
// lines, the others being text for a person (warnings, errors).
const progressPrefix = "msbench-progress "

// WriteProgress writes s as one line that ParseProgress reads back: a
// generator's progress, for the msbench that runs it from afar.
func WriteProgress(w io.Writer, s load.Snapshot) {
	// A struct of numbers always marshals.
	data, _ := json.Marshal(s)
	fmt.Fprintf(w, "%s%s\n", progressPrefix, data)
}

// ParseProgress reads a line that WriteProgress wrote; ok is false for
// any other line.
func ParseProgress(line string) (s load.Snapshot, ok bool) {
	rest, found := strings.CutPrefix(line, progressPrefix)
	if !found {
		return load.Snapshot{}, false
	}
	return s, json.Unmarshal([]byte(rest), &s) == nil
}
