package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/results"
)

// auditCause is one way a step fails its noise audit, known by how its
// reason begins, with the figure that says how badly.
type auditCause struct {
	prefix string
	words  string // with a %s for the worst figure
	figure func(a *results.Audit) float64
	worst  func(a, b float64) float64
}

var auditCauses = []auditCause{
	{"processes outside the run", "other processes used up to %s of the machine's CPU", func(a *results.Audit) float64 { return a.ForeignShare }, maxOf},
	{"the hypervisor stole", "the hypervisor stole up to %s of the CPU time", func(a *results.Audit) float64 { return a.StealShare }, maxOf},
	{"the generator was saturated", "the load generator was saturated (up to %s of its cores)", func(a *results.Audit) float64 { return a.GeneratorCPUUtil }, maxOf},
	{"achieved", "the open model sent as little as %s of its rate", func(a *results.Audit) float64 { return a.AchievedRPS / a.TargetRPS }, minOf},
}

func maxOf(a, b float64) float64 { return max(a, b) }
func minOf(a, b float64) float64 { return min(a, b) }

// leftOut is what the verdicts left out: the units whose noise audit
// failed, counted by cause.
type leftOut struct {
	units  []string // "variant step (repetition N)"
	causes []causeCount
}

type causeCount struct {
	words string
	units int
	worst float64
	cause *auditCause // nil for a reason of no known cause, kept as written
}

// failedAudits collects the units of a run whose noise audit failed.
func failedAudits(ds *analysis.Dataset) leftOut {
	var l leftOut
	for _, v := range ds.Study.Runs() {
		for _, st := range ds.Study.Load.Steps {
			for _, u := range ds.Units(v.Key(), st.Name) {
				if u.AuditOK() {
					continue
				}
				l.units = append(l.units, fmt.Sprintf("%s %s (repetition %d)", v.Key(), st.Name, u.Rep))
				for _, r := range u.Audit.Reasons {
					l.count(u.Audit, r)
				}
			}
		}
	}
	slices.Sort(l.units)
	slices.SortStableFunc(l.causes, func(a, b causeCount) int { return b.units - a.units })
	return l
}

// count adds a unit's reason to its cause.
func (l *leftOut) count(a *results.Audit, reason string) {
	i := slices.IndexFunc(auditCauses, func(c auditCause) bool { return strings.HasPrefix(reason, c.prefix) })
	var c *auditCause
	words := reason
	if i >= 0 {
		c, words = &auditCauses[i], auditCauses[i].prefix
	}
	j := slices.IndexFunc(l.causes, func(cc causeCount) bool { return cc.words == words })
	if j < 0 {
		cc := causeCount{words: words, cause: c}
		if c != nil {
			cc.worst = c.figure(a)
		}
		l.causes, j = append(l.causes, cc), len(l.causes)
	}
	cc := &l.causes[j]
	cc.units++
	if c != nil {
		cc.worst = c.worst(cc.worst, c.figure(a))
	}
}

func (c causeCount) String() string {
	if c.cause == nil {
		return c.words
	}
	return fmt.Sprintf(c.cause.words, analysis.Pct(c.worst))
}

// why says in words why the verdicts lack these units: each cause with
// its worst figure and how many units it failed.
func (l leftOut) why() string {
	var parts []string
	for _, c := range l.causes {
		parts = append(parts, fmt.Sprintf("%s (%d of the %d units left out)", c, c.units, len(l.units)))
	}
	return strings.Join(parts, "; ")
}

// describe adds to the claims section what was left out: a sentence, a
// table of causes and the units as a folded list.
func (l leftOut) describe(sec *analysis.Section) {
	sec.Text = append(sec.Text, fmt.Sprintf("%d measured units (a step of a variant in one repetition) are left out of the verdicts because their noise audit failed: they measured the machine's contention as much as the system. msbench report --keep-failed-audits judges them too.", len(l.units)))
	t := analysis.Table{Caption: "Why units were left out: a unit may fail for several causes at once.", Header: []string{"cause", "units", "worst"}}
	for _, c := range l.causes {
		worst := "–"
		if c.cause != nil {
			worst = analysis.Pct(c.worst)
		}
		t.Rows = append(t.Rows, []string{c.String(), fmt.Sprint(c.units), worst})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Details = append(sec.Details, analysis.Details{Summary: fmt.Sprintf("The %d units left out", len(l.units)), Items: l.units})
}
