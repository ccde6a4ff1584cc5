package frameworks

import (
	"strconv"

	"github.com/msbench/msbench/internal/analysis"
)

// microAttemptMs is go-micro v5's time-out for one RPC attempt
// (client.DefaultConnectionTimeout), which the Micro gateway keeps as the
// library's documentation teaches (services/README.md): an answer later
// than it took a retry at least, unless it waited in the gateway first.
const microAttemptMs = 5000

// retriesSection shows, repetition by repetition, how many of Micro's
// requests at high load outlived one RPC attempt. go-micro retries a
// timed-out attempt without cancelling it, so near the edge each retry
// adds a parse to the one core's queue: a repetition stays under the edge
// or falls into retries and the load's time-out, and the median over
// repetitions alone would not say which happened.
func (r *fwRun) retriesSection() (analysis.Section, error) {
	attempt := strconv.Itoa(microAttemptMs/1000) + " s"
	sec := analysis.Section{
		Title: "Micro's RPC time-out and retries (ours)",
		Text: []string{
			"go-micro's client gives an RPC attempt " + attempt + ", then tries again, up to 5 times within 30 s; the attempt it gave up on is not cancelled, so the service it called still does the work. " +
				"The Micro gateway keeps these defaults, as the library's documentation teaches them (services/README.md, where the same load run with retries off is measured beside them). " +
				"When a call's time in the universities service nears the attempt's time-out, every retry adds a parse of the dataset to the one core's queue and makes the next calls slower still: a repetition either stays under the edge or falls into retries and the load's own 30 s time-out. " +
				"Per repetition of Universities at high load: the requests that outlived one attempt (answered later than " + attempt + ", which took a retry unless they waited in the gateway first, or never answered), beside the share answered 200 and the median. " +
				"The first says how far a repetition went into retries, the second whether it came back or ran into the load's time-out. Where a run has repetitions of both kinds, Micro's high-load Universities figures spread between them by that, not by too few requests, and their intervals above are as wide.",
			r.notMeasured(),
		},
	}
	t := analysis.Table{
		Caption: "Micro's Universities at high load, per repetition, from every record.",
		Header:  []string{"variant", "dataset loaded", "rep", "requests", "past one attempt %", "200 %", "p50 ms"},
	}
	if c := r.at(universities, high); c != nil {
		for _, v := range r.variants() {
			if v.fw != micro {
				continue
			}
			for _, u := range r.ds.Units(v.key, c.step.Name) {
				row := []string{v.key, v.loadText(), strconv.Itoa(u.Rep), "–", "–", "–", analysis.Num(p50(u), 0)}
				if s := r.rec(u); s != nil && s.n > 0 {
					row[3] = strconv.Itoa(s.n)
					row[4] = analysis.Num(100*sharePastAttempt(s), 1)
					row[5] = analysis.Num(100*share200(s), 1)
				}
				t.Rows = append(t.Rows, row)
			}
		}
	}
	if len(t.Rows) == 0 {
		sec.Text = append(sec.Text, "No Micro variant was measured in Universities at high load.")
		return sec, nil
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}
