// Package claims reads a study's published claims as data (claims.yaml in
// its folder) and judges each against what a run measured, with the
// run's uncertainty: a claim is reproduced only when the whole confidence
// interval of its metric lies in the region the claim states, not
// reproduced when it lies wholly outside, and inconclusive when it
// straddles. Analyses supply metrics (per-run values); they never decide
// verdicts themselves.
package claims

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// FileName is the claims file in a study's folder.
const FileName = "claims.yaml"

// File is a study's claims file.
type File struct {
	// Figures are published figures in the shape they were published,
	// named for the analyses that draw them beside the measured ones.
	Figures map[string]Figure `yaml:"figures"`
	Claims  []Claim           `yaml:"claims"`
}

// Figure is a published figure as published: one value, a range, a list
// (e.g. per request number), points (x → y) or bands (a y range over an x
// range, e.g. "800–850 ms for 40–90 KB").
type Figure struct {
	Value  *float64           `yaml:"value"`
	Range  []float64          `yaml:"range"`
	List   []float64          `yaml:"list"`
	Points map[string]float64 `yaml:"points"`
	Bands  []Band             `yaml:"bands"`
	Unit   string             `yaml:"unit"`
	Source string             `yaml:"source"`
}

// Band is a y range published over an x range.
type Band struct {
	X [2]float64 `yaml:"x"`
	Y [2]float64 `yaml:"y"`
}

// Claim is one published statement, or a finding of ours.
type Claim struct {
	ID        string `yaml:"id"`
	Text      string `yaml:"text"`
	Source    string `yaml:"source"`    // where the paper says it: section, table, figure
	Published string `yaml:"published"` // the figure as the paper states it, in words
	Figure    string `yaml:"figure"`    // the id of its figure in Figures, if drawn
	Metric    string `yaml:"metric"`    // the analysis' metric the claim is judged on
	Expect    Expect `yaml:"expect"`
	// Explain names a measured cause: when the claim holds only because
	// of it, the verdict is "explained by" it.
	Explain *Explanation `yaml:"explain"`
	// Ours marks a question the paper never asked: a finding, never
	// "reproduced".
	Ours bool `yaml:"ours"`
	// TargetWidth is how narrow this claim's interval must be (a share:
	// 0.2 for 20%) before msbench run --target-width stops adding
	// repetitions; 0 takes the run's.
	TargetWidth float64 `yaml:"target_width"`
	line        int
}

// Expect is the region of the metric's scale in which the claim holds:
// exactly one of above, below, within, or near with a margin.
type Expect struct {
	Above  *float64  `yaml:"above"`
	Below  *float64  `yaml:"below"`
	Within []float64 `yaml:"within"`
	Near   *float64  `yaml:"near"`
	// Margin is the share of Near counted as the same, e.g. 0.1.
	Margin float64 `yaml:"margin"`
	// Why the threshold or margin is what it is, in words.
	Why string `yaml:"why"`
}

// Explanation is a measured cause of a claim's outcome.
type Explanation struct {
	Text   string `yaml:"text"`
	Metric string `yaml:"metric"`
	Expect Expect `yaml:"expect"`
}

// claimFields are a claim's keys: a custom unmarshaller is not held to
// the decoder's known fields, so it checks them itself.
var claimFields = []string{"id", "text", "source", "published", "figure", "metric", "expect", "explain", "ours", "target_width"}

// UnmarshalYAML keeps the claim's line for error messages.
func (c *Claim) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(claimFields, k.Value) {
				return fmt.Errorf("line %d: field %s not found in a claim (known: %s)", k.Line, k.Value, strings.Join(claimFields, ", "))
			}
		}
	}
	type plain Claim
	if err := n.Decode((*plain)(c)); err != nil {
		return err
	}
	c.line = n.Line
	return nil
}

// Load reads and checks a claims file; every mistake is reported with the
// file, line and field.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a claims file from data; name names it in errors.
func Parse(name string, data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var errs []error
	bad := func(c Claim, i int, field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: claims[%d].%s: %s", name, c.line, i, field, fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	for i, c := range f.Claims {
		switch {
		case c.ID == "":
			bad(c, i, "id", "missing")
		case seen[c.ID]:
			bad(c, i, "id", "%q given twice", c.ID)
		}
		if !(c.TargetWidth >= 0 && c.TargetWidth < 10) {
			bad(c, i, "target_width", "%v: want a share of the value, such as 0.2 for 20%%", c.TargetWidth)
		}
		seen[c.ID] = true
		if c.Text == "" {
			bad(c, i, "text", "missing")
		}
		if c.Metric == "" {
			bad(c, i, "metric", "missing: which measured metric judges it")
		}
		if c.Figure != "" && f.Figures[c.Figure].empty() {
			bad(c, i, "figure", "no figure %q in figures", c.Figure)
		}
		if err := c.Expect.check(); err != nil {
			bad(c, i, "expect", "%v", err)
		}
		if c.Explain != nil {
			if c.Explain.Metric == "" || c.Explain.Text == "" {
				bad(c, i, "explain", "needs text and metric")
			}
			if err := c.Explain.Expect.check(); err != nil {
				bad(c, i, "explain.expect", "%v", err)
			}
		}
	}
	for id, fig := range f.Figures {
		if fig.empty() {
			errs = append(errs, fmt.Errorf("%s: figures.%s: give value, range, list, points or bands", name, id))
		}
		if fig.Range != nil && (len(fig.Range) != 2 || fig.Range[0] > fig.Range[1]) {
			errs = append(errs, fmt.Errorf("%s: figures.%s.range: want [low, high]", name, id))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &f, nil
}

func (f Figure) empty() bool {
	return f.Value == nil && f.Range == nil && f.List == nil && f.Points == nil && f.Bands == nil
}

func (e Expect) check() error {
	set := 0
	for _, given := range []bool{e.Above != nil, e.Below != nil, e.Within != nil, e.Near != nil} {
		if given {
			set++
		}
	}
	switch {
	case set != 1:
		return errors.New("give exactly one of above, below, within, near")
	case e.Within != nil && (len(e.Within) != 2 || e.Within[0] > e.Within[1]):
		return errors.New("within: want [low, high]")
	case e.Near != nil && !(e.Margin > 0):
		return errors.New("near needs a margin > 0: the share counted as the same")
	case e.Near == nil && e.Margin != 0:
		return errors.New("margin goes with near")
	}
	return nil
}

// Claim returns the claim with that id.
func (f *File) Claim(id string) (Claim, bool) {
	i := slices.IndexFunc(f.Claims, func(c Claim) bool { return c.ID == id })
	if i < 0 {
		return Claim{}, false
	}
	return f.Claims[i], true
}

// CheckMetrics verifies that every claim is judged on a metric the
// analysis measures; name names the file in errors.
func (f *File) CheckMetrics(name string, measured []string) error {
	var errs []error
	for i, c := range f.Claims {
		used := []string{c.Metric}
		if c.Explain != nil {
			used = append(used, c.Explain.Metric)
		}
		for _, m := range used {
			if !slices.Contains(measured, m) {
				errs = append(errs, fmt.Errorf("%s:%d: claims[%d].metric: the analysis measures no %q (it measures: %s)", name, c.line, i, m, strings.Join(measured, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

// region is the interval of the metric's scale where the claim holds.
func (e Expect) region() (lo, hi float64) {
	switch {
	case e.Above != nil:
		return *e.Above, math.Inf(1)
	case e.Below != nil:
		return math.Inf(-1), *e.Below
	case e.Within != nil:
		return e.Within[0], e.Within[1]
	default:
		return *e.Near * (1 - e.Margin), *e.Near * (1 + e.Margin)
	}
}

// String says the region in words.
func (e Expect) String() string {
	switch {
	case e.Above != nil:
		return "> " + num(*e.Above)
	case e.Below != nil:
		return "< " + num(*e.Below)
	case e.Within != nil:
		return num(e.Within[0]) + " to " + num(e.Within[1])
	default:
		return fmt.Sprintf("%s ± %s%%", num(*e.Near), num(100*e.Margin))
	}
}

func num(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
}
