package study

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/pacer"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/tokens"
)

// The scalar types of a study file's sections. Each reads one node and
// says what is wrong with it; the decoder puts the node's file, line and
// field in front of what it says.

// scalar returns a string field's text: one scalar, not a list, a mapping
// or nothing.
func scalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", fmt.Errorf("want a string, got %s", kindName(n))
	}
	return n.Value, nil
}

// nonEmpty is a text that must say something: a name, a directory.
type nonEmpty string

func (s *nonEmpty) UnmarshalYAML(n *yaml.Node) error {
	v, err := nonEmptyText(n)
	*s = nonEmpty(v)
	return err
}

func nonEmptyText(n *yaml.Node) (string, error) {
	v, err := scalar(n)
	if err == nil && strings.TrimSpace(v) == "" {
		err = errors.New("must not be empty")
	}
	return v, err
}

// oneOf reads a text that must be one of choices.
func oneOf(n *yaml.Node, choices []string) (string, error) {
	s, err := scalar(n)
	if err == nil && !slices.Contains(choices, s) {
		err = fmt.Errorf("%q is not one of %s", s, strings.Join(choices, ", "))
	}
	return s, err
}

// loadModel is a step's model: closed (users in a loop) or open (arrivals
// on a schedule).
type loadModel string

func (m *loadModel) UnmarshalYAML(n *yaml.Node) error {
	s, err := oneOf(n, []string{"closed", "open"})
	*m = loadModel(s)
	return err
}

// faultName is a link event's fault (links.Faults).
type faultName string

func (f *faultName) UnmarshalYAML(n *yaml.Node) error {
	s, err := oneOf(n, links.Faults)
	*f = faultName(s)
	return err
}

// algorithm is a token's signing algorithm (tokens.Algorithms).
type algorithm string

func (a *algorithm) UnmarshalYAML(n *yaml.Node) error {
	s, err := oneOf(n, tokens.Algorithms)
	*a = algorithm(s)
	return err
}

// method is an HTTP method, upper-cased; it is written into the request
// verbatim, so it must be a token.
type method string

func (m *method) UnmarshalYAML(n *yaml.Node) error {
	s, err := nonEmptyText(n)
	*m = method(strings.ToUpper(s))
	if err != nil {
		return err
	}
	return load.CheckMethod(string(*m))
}

// statusSet is what answers count as success, e.g. 2xx or 200,304: read
// by the engine's own parser, so that a mistake is found with the file.
type statusSet string

func (s *statusSet) UnmarshalYAML(n *yaml.Node) error {
	v, err := nonEmptyText(n)
	*s = statusSet(v)
	if err == nil {
		_, err = load.ParseStatusSet(v)
	}
	return err
}

// count is a whole number of at least 1: users, replicas, requests.
type count int64

func (c *count) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil {
		return fmt.Errorf("want a whole number, got %q", n.Value)
	}
	if v < 1 {
		return fmt.Errorf("want at least 1, got %d", v)
	}
	*c = count(v)
	return nil
}

// number reads a finite number of at least min.
func number(n *yaml.Node, min float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a number, got %q", n.Value)
	}
	if v < min {
		return v, fmt.Errorf("want at least %v, got %v", min, v)
	}
	return v, nil
}

// nonNegative is a rate or a share: a number of at least 0.
type nonNegative float64

func (f *nonNegative) UnmarshalYAML(n *yaml.Node) error {
	v, err := number(n, 0)
	*f = nonNegative(v)
	return err
}

// cpuShare is a CPU limit in cores; a hundredth is the least a cgroup
// quota keeps a process running on.
type cpuShare float64

func (f *cpuShare) UnmarshalYAML(n *yaml.Node) error {
	v, err := number(n, 0.01)
	*f = cpuShare(v)
	return err
}

// duration is a positive Go duration such as 30s or 1m30s.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return fmt.Errorf("want a duration such as 30s or 1m30s, got %q", n.Value)
	}
	if v <= 0 {
		return fmt.Errorf("want a positive duration, got %s", n.Value)
	}
	*d = duration(v)
	return nil
}

// byteSize is a size such as 256MiB, 1G or a plain byte count.
type byteSize int64

func (b *byteSize) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if n.Kind != yaml.ScalarNode || err != nil || v <= 0 {
		return fmt.Errorf("want a size such as 256MiB or 1GiB, got %q", n.Value)
	}
	*b = byteSize(v * float64(mult))
	return nil
}

// think is a closed-model user's pause, 1s or a range 500ms-1s, read by
// the parser msbench load's --think shares.
type think load.Think

func (t *think) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	v, err := loadspec.ParseThink(s)
	*t = think(v)
	return err
}

// stages are an open model's ramps, 30s:500,1m:500, as --stages takes them.
type stages []pacer.Stage

func (st *stages) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	*st, err = loadspec.ParseStages(s)
	return err
}

// cores is a core list ("0", "0-1", "0,2") in its canonical form, or
// PlacementAll.
type cores string

func (c *cores) UnmarshalYAML(n *yaml.Node) error {
	v, err := nonEmptyText(n)
	if err != nil {
		return err
	}
	s := strings.TrimSpace(v)
	if s == PlacementAll {
		*c = cores(s)
		return nil
	}
	list, err := placement.Parse(s)
	if err != nil {
		return fmt.Errorf("%v, or %s", err, PlacementAll)
	}
	*c = cores(list.String())
	return nil
}

// replicas is a replica count, or {AXIS}: the count is that axis' value.
type replicas struct {
	n    int
	axis string
}

func (r *replicas) UnmarshalYAML(n *yaml.Node) error {
	if m := placeholder.Pattern.FindStringSubmatch(n.Value); m != nil && m[0] == n.Value {
		r.axis = m[1]
		return nil
	}
	var c count
	err := c.UnmarshalYAML(n)
	r.n = int(c)
	return err
}

// linkLatency is a link's latency or jitter, and linkBandwidth its
// bandwidth, kept as written: checked now unless it names axes, which
// Parse checks for every variant.
type (
	linkLatency   string
	linkBandwidth string
)

func (l *linkLatency) UnmarshalYAML(n *yaml.Node) error {
	s, err := linkSetting(n, func(s string) error { _, err := links.ParseDuration(s); return err })
	*l = linkLatency(s)
	return err
}

func (l *linkBandwidth) UnmarshalYAML(n *yaml.Node) error {
	s, err := linkSetting(n, func(s string) error { _, err := links.ParseBandwidth(s); return err })
	*l = linkBandwidth(s)
	return err
}

func linkSetting(n *yaml.Node, parse func(string) error) (string, error) {
	s, err := nonEmptyText(n)
	if err != nil || placeholder.Pattern.MatchString(s) {
		return s, err
	}
	return s, parse(s)
}
