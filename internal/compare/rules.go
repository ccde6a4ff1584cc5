package compare

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/metrics/summarymetric"
)

// Rule is one --fail-if condition: NEW worse than BASE by more than a
// margin, with the whole confidence interval past it.
//
//	p50>+10%  p90>+10%  p99>+10%  mean>+10%   latency up by more than 10%: NEW/BASE interval entirely above 1.10
//	throughput<-5%                            throughput down by more than 5%: interval entirely below 0.95
//	errors>+1%                                error rate up by more than 1 percentage point: NEW − BASE interval entirely above 0.01
//
// Any figure of summarymetric.All may be gated, written the way it gets
// worse. The sign may be left out (p99>10%, throughput<5%); a sign against
// the direction in which the figure gets worse is refused, so a rule
// cannot silently fail builds that got faster.
type Rule struct {
	Text    string // as given
	Metric  summarymetric.Descriptor
	Percent float64 // signed margin: +10 for p99>+10%, −5 for throughput<-5%
}

// syntax is how a rule is written and its breach told, for a figure that
// gets worse going one way.
type syntax struct {
	op, sign string // '>' and '+' for p99>+10%
	going    string // the way the figure gets worse
	bound    string // the end of the interval that must lie past the limit
	past     string // where it lies when it does
}

var ruleSyntax = map[summarymetric.Direction]syntax{
	summarymetric.Up:   {op: ">", sign: "+", going: "up", bound: "lower", past: "above"},
	summarymetric.Down: {op: "<", sign: "-", going: "down", bound: "upper", past: "below"},
}

var ruleRE = regexp.MustCompile(`^\s*([a-z0-9]+)\s*([<>])\s*([+-]?)\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// ParseRule reads a --fail-if rule; mistakes are UsageErrors saying what
// to write instead.
func ParseRule(text string) (Rule, error) {
	m := ruleRE.FindStringSubmatch(text)
	if m == nil {
		return Rule{}, usagef("--fail-if %q: want %s, e.g. 'p99>+10%%'", text, ruleForms())
	}
	name, op, sign := m[1], m[2], m[3]
	d, ok := summarymetric.Named(name)
	if !ok {
		return Rule{}, usagef("--fail-if %q: unknown metric %q: want %s", text, name, figureNames())
	}
	pct, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsInf(pct, 0) {
		return Rule{}, usagef("--fail-if %q: %q is not a percentage", text, m[4])
	}
	syn := ruleSyntax[d.Worse]
	if op != syn.op || (sign != "" && sign != syn.sign) {
		return Rule{}, usagef("--fail-if %q: %s gets worse by going %s: write e.g. '%s%s%s%s%%'", text, name, syn.going, name, syn.op, syn.sign, m[4])
	}
	if op == "<" {
		pct = -pct
	}
	r := Rule{Text: strings.TrimSpace(text), Metric: d, Percent: pct}
	// A limit the change cannot reach is a rule that can never fail.
	switch limit, rng := r.Limit(), d.ChangeRange(); {
	case d.Change == summarymetric.Ratio && limit <= rng.Lo:
		return Rule{}, usagef("--fail-if %q: %s cannot fall by 100%% or more", text, name)
	case limit < rng.Lo || limit > rng.Hi: // a difference of shares
		return Rule{}, usagef("--fail-if %q: %s cannot move by more than %s percentage points", text, name, strconv.FormatFloat(100*rng.Hi, 'f', -1, 64))
	}
	return r, nil
}

// ruleForms says how rules are written, figure by figure: "METRIC>+X%
// (p50, …) or METRIC<-X% (throughput)".
func ruleForms() string {
	var forms []string
	for _, dir := range []summarymetric.Direction{summarymetric.Up, summarymetric.Down} {
		var names []string
		for _, d := range summarymetric.All {
			if d.Worse == dir {
				names = append(names, d.Name)
			}
		}
		if len(names) > 0 {
			syn := ruleSyntax[dir]
			forms = append(forms, fmt.Sprintf("METRIC%s%sX%% (%s)", syn.op, syn.sign, strings.Join(names, ", ")))
		}
	}
	return strings.Join(forms, " or ")
}

// figureNames lists the figures' names: "p50, p90, … or errors".
func figureNames() string {
	names := make([]string, len(summarymetric.All))
	for i, d := range summarymetric.All {
		names[i] = d.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Limit is the value the interval must lie entirely beyond: a NEW/BASE
// ratio (1.10 for +10%, 0.95 for −5%), or for a difference (errors) a
// difference of shares (0.01 for +1%).
func (r Rule) Limit() float64 {
	return r.Metric.Change.Neutral() + r.Percent/100
}

// bound is the end of m's interval at the given (two-sided) level that
// must lie past the limit: the lower end where the figure gets worse by
// going up, the upper where it gets worse going down. Not ok when the
// interval is unknown or unbounded: that test cannot fail.
func (r Rule) bound(m *MetricResult, level float64) (b float64, ok bool) {
	if m.ci == nil {
		return math.NaN(), false
	}
	lo, hi := m.ci(level)
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return math.NaN(), false
	}
	if r.Metric.Worse == summarymetric.Down {
		return hi, true
	}
	return lo, true
}

// past reports whether a bound lies past the rule's limit on the worse
// side.
func (r Rule) past(bound float64) bool {
	if r.Metric.Worse == summarymetric.Down {
		return bound < r.Limit()
	}
	return bound > r.Limit()
}

// CorrectionBonferroni names the gate's multiplicity correction.
const CorrectionBonferroni = "bonferroni"

// Gate is how the --fail-if rules are tested together. Every rule on
// every comparison it reads is one test of "NEW is worse than the
// limit"; over k tests, each is made at the one-sided level 1 − α/k
// (Bonferroni), α = 1 − the report's level, so that a build no worse than
// every limit fails with probability at most α (5%) for the whole
// comparison, whatever k and however the comparisons depend on each
// other. Holm's step-down procedure would fail exactly the same builds:
// its first step is this test at α/k, and the gate fails as soon as one
// test does.
type Gate struct {
	Correction string  `json:"correction"`
	Alpha      float64 `json:"alpha"`      // false-alarm rate for the whole comparison
	Tests      int     `json:"tests"`      // k: each rule on each comparison it reads
	TestLevel  float64 `json:"test_level"` // one-sided level of each test, 1 − α/k
	// Unknown counts the tests with no bounded interval at TestLevel;
	// they cannot fail, so the gate is blind there.
	Unknown int `json:"unknown"`
}

// RuleResult is one rule tested on one comparison.
type RuleResult struct {
	Rule     string `json:"rule"`
	Step     string `json:"step"`
	Variant  string `json:"variant"`
	Metric   string `json:"metric"`
	Limit    Num    `json:"limit"`
	Estimate Num    `json:"estimate"`
	Lo       Num    `json:"ci_lo"` // the comparison's interval at the report's level
	Hi       Num    `json:"ci_hi"`
	// Bound is the one-sided bound at the gate's TestLevel that decides:
	// breached when it lies past Limit. Null when Unknown.
	Bound    Num    `json:"bound"`
	Unknown  bool   `json:"unknown"`
	Breached bool   `json:"breached"`
	Method   string `json:"method"`
	BaseRuns int    `json:"base_runs"`
	NewRuns  int    `json:"new_runs"`
	label    string
	figure   summarymetric.Descriptor
}

// Apply tests every rule on every comparison as Gate says, records the
// results in r.FailIf and r.Gate and sets r.Failed when any rule was
// breached. A rule that would read a comparison of one run a side without
// a noise model (MethodBlock) is refused with a UsageError: its interval
// lacks the run-to-run variation, and identical systems 20% apart from
// one deployment to the next would fail a 10% rule about a quarter of the
// time.
func (r *Report) Apply(rules []Rule) error {
	type test struct {
		rule Rule
		c    *Comparison
		m    *MetricResult
	}
	var tests []test
	for _, rule := range rules {
		for i := range r.Comparisons {
			c := &r.Comparisons[i]
			m := c.Metric(rule.Metric.Name)
			if m == nil {
				continue
			}
			if c.Method == MethodBlock {
				return usagef("--fail-if %s: %s has one run a side, which cannot tell a regression from how far two deployments of one system come apart: "+
					"give a side several runs (a directory of several msbench load --out directories) or pass --noise with A/A runs", rule.Text, c.Label())
			}
			tests = append(tests, test{rule, c, m})
		}
	}
	if len(tests) == 0 {
		return nil
	}
	alpha, k := 1-r.Level, float64(len(tests))
	r.Gate = &Gate{Correction: CorrectionBonferroni, Alpha: alpha, Tests: len(tests), TestLevel: 1 - alpha/k}
	// The one-sided bound at 1 − α/k is an end of the two-sided interval
	// at 1 − 2α/k.
	twoSided := 1 - 2*alpha/k
	for _, t := range tests {
		res := RuleResult{Rule: t.rule.Text, Step: t.c.Step, Variant: t.c.Variant, Metric: t.rule.Metric.Name, Limit: Num(t.rule.Limit()),
			Estimate: t.m.Estimate, Lo: t.m.Lo, Hi: t.m.Hi, Method: t.c.Method, BaseRuns: t.c.BaseRuns, NewRuns: t.c.NewRuns,
			label: t.c.Label(), figure: t.rule.Metric}
		b, ok := t.rule.bound(t.m, twoSided)
		res.Bound, res.Unknown, res.Breached = Num(b), !ok, ok && t.rule.past(b)
		if res.Unknown {
			r.Gate.Unknown++
		}
		r.FailIf = append(r.FailIf, res)
		r.Failed = r.Failed || res.Breached
	}
	return nil
}

// Breaches lists the breached rules in one line each, e.g.
// "p99>+10%: steady go: p99 1.220× (95% CI 1.150–1.300×); one-sided 99.17%
// lower bound 1.130× above 1.100× (Bonferroni over 6 tests; 5 vs 5 runs)".
func (r *Report) Breaches() []string {
	var out []string
	for _, res := range r.FailIf {
		if res.Breached {
			out = append(out, res.describe(r.Level, r.Gate))
		}
	}
	return out
}

func (res RuleResult) describe(level float64, g *Gate) string {
	syn, c := ruleSyntax[res.figure.Worse], res.figure.Change
	change, ci, bound, limit := changeText(c, res.Estimate), ciText(c, res.Lo, res.Hi), changeText(c, res.Bound), changeText(c, res.Limit)
	return fmt.Sprintf("%s: %s: %s %s (%s%% CI %s); one-sided %s%% %s bound %s %s %s (Bonferroni over %d test%s; %d vs %d runs)",
		res.Rule, res.label, res.Metric, change, pct(level), ci, pct(g.TestLevel), syn.bound, bound, syn.past, limit, g.Tests, plural(g.Tests), res.BaseRuns, res.NewRuns)
}
