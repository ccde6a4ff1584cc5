package compare

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Rule is one --fail-if condition: NEW worse than BASE by more than a
// margin, with the whole confidence interval past it.
//
//	p50>+10%  p90>+10%  p99>+10%  mean>+10%   latency up by more than 10%: NEW/BASE interval entirely above 1.10
//	throughput<-5%                            throughput down by more than 5%: interval entirely below 0.95
//	errors>+1%                                error rate up by more than 1 percentage point: NEW − BASE interval entirely above 0.01
//
// The sign may be left out (p99>10%, throughput<5%); a sign against the
// direction in which the metric gets worse is refused, so a rule cannot
// silently fail builds that got faster.
type Rule struct {
	Text    string  // as given
	Metric  string  // one of Metrics
	Percent float64 // signed margin: +10 for p99>+10%, −5 for throughput<-5%
}

var ruleRE = regexp.MustCompile(`^\s*([a-z0-9]+)\s*([<>])\s*([+-]?)\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// ParseRule reads a --fail-if rule; mistakes are UsageErrors saying what
// to write instead.
func ParseRule(text string) (Rule, error) {
	m := ruleRE.FindStringSubmatch(text)
	if m == nil {
		return Rule{}, usagef("--fail-if %q: want METRIC>+X%% (p50, p90, p99, mean, errors) or throughput<-X%%, e.g. 'p99>+10%%'", text)
	}
	metric, op, sign := m[1], m[2], m[3]
	if !slices.Contains(Metrics, metric) {
		return Rule{}, usagef("--fail-if %q: unknown metric %q: want p50, p90, p99, mean, throughput or errors", text, metric)
	}
	pct, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsInf(pct, 0) {
		return Rule{}, usagef("--fail-if %q: %q is not a percentage", text, m[4])
	}
	worse := ">"
	if metric == "throughput" {
		worse = "<"
	}
	if op != worse || (op == ">" && sign == "-") || (op == "<" && sign == "+") {
		if metric == "throughput" {
			return Rule{}, usagef("--fail-if %q: throughput gets worse by going down: write e.g. 'throughput<-%s%%'", text, m[4])
		}
		return Rule{}, usagef("--fail-if %q: %s gets worse by going up: write e.g. '%s>+%s%%'", text, metric, metric, m[4])
	}
	if op == "<" {
		pct = -pct
	}
	if metric == "errors" && pct > 100 {
		return Rule{}, usagef("--fail-if %q: an error rate cannot grow by more than 100 percentage points", text)
	}
	if metric == "throughput" && pct <= -100 {
		return Rule{}, usagef("--fail-if %q: throughput cannot fall by 100%% or more", text)
	}
	return Rule{Text: strings.TrimSpace(text), Metric: metric, Percent: pct}, nil
}

// Limit is the value the interval must lie entirely beyond: a NEW/BASE
// ratio (1.10 for +10%, 0.95 for −5%), or for errors a difference of
// shares (0.01 for +1%).
func (r Rule) Limit() float64 {
	if r.Metric == "errors" {
		return r.Percent / 100
	}
	return 1 + r.Percent/100
}

// Breached reports whether a metric's whole interval lies past the rule's
// limit on the worse side. An interval that could not be computed never
// breaches a rule (the output says "unknown").
func (r Rule) Breached(m *MetricResult) bool {
	lo, hi := float64(m.Lo), float64(m.Hi)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return false
	}
	if r.Metric == "throughput" {
		return hi < r.Limit()
	}
	return lo > r.Limit()
}

// RuleResult is one rule checked on one comparison.
type RuleResult struct {
	Rule     string `json:"rule"`
	Step     string `json:"step"`
	Variant  string `json:"variant"`
	Metric   string `json:"metric"`
	Limit    Num    `json:"limit"`
	Estimate Num    `json:"estimate"`
	Lo       Num    `json:"ci_lo"`
	Hi       Num    `json:"ci_hi"`
	Breached bool   `json:"breached"`
	label    string
}

// Apply checks every rule on every comparison, records the results in
// r.FailIf and sets r.Failed when any rule was breached.
func (r *Report) Apply(rules []Rule) {
	for _, rule := range rules {
		for i := range r.Comparisons {
			c := &r.Comparisons[i]
			m := c.Metric(rule.Metric)
			if m == nil {
				continue
			}
			res := RuleResult{Rule: rule.Text, Step: c.Step, Variant: c.Variant, Metric: rule.Metric, Limit: Num(rule.Limit()),
				Estimate: m.Estimate, Lo: m.Lo, Hi: m.Hi, Breached: rule.Breached(m), label: c.Label()}
			r.FailIf = append(r.FailIf, res)
			r.Failed = r.Failed || res.Breached
		}
	}
}

// Breaches lists the breached rules in one line each, e.g.
// "p99>+10%: steady go: p99 1.22× (95% CI 1.15–1.30×), entirely above 1.10×".
func (r *Report) Breaches() []string {
	var out []string
	for _, res := range r.FailIf {
		if res.Breached {
			out = append(out, res.describe(r.Level))
		}
	}
	return out
}

func (res RuleResult) describe(level float64) string {
	where := "above"
	if res.Metric == "throughput" {
		where = "below"
	}
	if res.Metric == "errors" {
		return fmt.Sprintf("%s: %s: errors %s (%s%% CI %s to %s), entirely %s %s", res.Rule, res.label,
			points(float64(res.Estimate)), pct(level), points(float64(res.Lo)), points(float64(res.Hi)), where, points(float64(res.Limit)))
	}
	return fmt.Sprintf("%s: %s: %s %s× (%s%% CI %s–%s×), entirely %s %s×", res.Rule, res.label, res.Metric,
		ratio3(float64(res.Estimate)), pct(level), ratio3(float64(res.Lo)), ratio3(float64(res.Hi)), where, ratio3(float64(res.Limit)))
}
