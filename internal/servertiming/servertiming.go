// Package servertiming reads the W3C Server-Timing response header, which
// msbench uses to split a request into stages without scraping logs.
package servertiming

import (
	"bytes"
	"strconv"
	"unsafe"
)

// Metric is one entry with a duration. Name aliases the parsed header, so a
// caller that keeps it must copy it.
type Metric struct {
	Name []byte
	Dur  float64 // milliseconds, as the header states them
}

// Parse appends the metrics of one header value to dst. Entries without a
// dur parameter carry no timing and are skipped; entries with an empty name
// or a dur that is not a non-negative number are counted as malformed and
// skipped, so one bad entry does not hide the others. It does not allocate
// when dst has room.
func Parse(dst []Metric, value []byte) ([]Metric, int) {
	malformed := 0
	for len(value) > 0 {
		var entry []byte
		entry, value = cut(value, ',')
		name, params := cut(entry, ';')
		name = bytes.TrimSpace(name)
		if len(name) == 0 {
			if len(bytes.TrimSpace(entry)) > 0 {
				malformed++
			}
			continue
		}
		if !isToken(name) {
			malformed++
			continue
		}
		dur, hasDur, ok := durParam(params)
		switch {
		case !ok:
			malformed++
		case hasDur:
			dst = append(dst, Metric{Name: name, Dur: dur})
		}
	}
	return dst, malformed
}

// durParam finds dur=… among ;-separated parameters. The first dur wins, as
// the specification says.
func durParam(params []byte) (dur float64, found, ok bool) {
	for len(params) > 0 {
		var p []byte
		p, params = cut(params, ';')
		key, val, hasVal := bytes.Cut(p, []byte{'='})
		key = bytes.TrimSpace(key)
		if len(key) == 0 {
			continue
		}
		if found || !equalFold(key, "dur") {
			continue
		}
		found = true
		val = bytes.Trim(bytes.TrimSpace(val), `"`)
		if !hasVal || len(val) == 0 {
			return 0, true, false
		}
		// The string view is never retained: ParseFloat's error, which would
		// keep it, is dropped here.
		f, err := strconv.ParseFloat(unsafe.String(&val[0], len(val)), 64)
		if err != nil || f < 0 || f != f {
			return 0, true, false
		}
		dur = f
	}
	return dur, found, true
}

// cut splits s at the first sep that is not inside a quoted string.
func cut(s []byte, sep byte) (before, after []byte) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			return s[:i], s[i+1:]
		}
	}
	return s, nil
}

func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// isToken reports whether b is an RFC 9110 token, the only form a metric
// name may take.
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}
