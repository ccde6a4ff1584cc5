// Package placeholder fills in the {name} placeholders of study files,
// build commands and requests. The names a study may use are the study
// package's business; this package only finds and replaces them.
package placeholder

import (
	"fmt"
	"regexp"
	"strings"
)

// Pattern matches one placeholder; its first group is the name, e.g.
// service.db.addr in {service.db.addr}.
var Pattern = regexp.MustCompile(`\{([a-z][a-z0-9_]*(?:\.[a-z0-9_-]+)*)\}`)

// Expand fills in placeholders from values; a name without a value is an
// error that names it.
func Expand(text string, values map[string]string) (string, error) {
	var missing []string
	out := Pattern.ReplaceAllStringFunc(text, func(m string) string {
		v, ok := values[m[1:len(m)-1]]
		if !ok {
			missing = append(missing, m)
		}
		return v
	})
	if missing != nil {
		return "", fmt.Errorf("%q: no value for %s", text, strings.Join(missing, ", "))
	}
	return out, nil
}
