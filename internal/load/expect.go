package load

import (
	"fmt"
	"strconv"
	"strings"
)

// StatusSet is the set of status codes that count as success.
type StatusSet struct{ bits [10]uint64 } // codes 0..639

// ParseStatusSet reads a comma-separated list of codes and ranges, such as
// "200-299,304"; "2xx" style classes are accepted too.
func ParseStatusSet(s string) (StatusSet, error) {
	var set StatusSet
	if strings.TrimSpace(s) == "" {
		return set, fmt.Errorf("expected status: empty")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, err := statusRange(part)
		if err != nil {
			return set, fmt.Errorf("expected status %q: %w", part, err)
		}
		for c := lo; c <= hi; c++ {
			set.bits[c/64] |= 1 << (c % 64)
		}
	}
	return set, nil
}

func statusRange(part string) (int, int, error) {
	if len(part) == 3 && strings.HasSuffix(strings.ToLower(part), "xx") && part[0] >= '1' && part[0] <= '5' {
		lo := int(part[0]-'0') * 100
		return lo, lo + 99, nil
	}
	a, b, isRange := strings.Cut(part, "-")
	lo, err := statusCode(a)
	if err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, err := statusCode(b)
	if err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range ends before it starts")
	}
	return lo, hi, nil
}

func statusCode(s string) (int, error) {
	c, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || c < 100 || c > 599 {
		return 0, fmt.Errorf("%q is not a status code (100-599)", s)
	}
	return c, nil
}

// Has reports whether code is in the set.
func (s *StatusSet) Has(code int) bool {
	return code >= 0 && code < 640 && s.bits[code/64]&(1<<(code%64)) != 0
}

// Success2xx is the default expectation.
func Success2xx() StatusSet {
	s, _ := ParseStatusSet("2xx")
	return s
}
