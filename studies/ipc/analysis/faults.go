package ipc

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// Availability as the paper measured it, in windows short enough for
// steps of minutes: the page has failed from the first 10-s window in
// which under half the requests were answered 200, and has recovered from
// the first 5-s window in which at least 99% were (the paper's "first good
// minute" is longer than a fault step's whole recovery here).
const (
	failWindow = 10 * time.Second
	failBelow  = 0.5
	goodWindow = 5 * time.Second
	goodShare  = 0.99
)

// answered200 is a product page served: what availability counts.
func answered200(r records.Row) bool { return r.Status == 200 && r.Error == "" }

// timeToFailure is the time from the step's start (start, Unix ns) to the
// first whole window of failWindow, by the requests' intended send times,
// in which under failBelow of them were answered 200; a window in which
// nothing was sent failed too (every user was still waiting). When no
// window of the step failed it is a lower bound: the step's duration.
func timeToFailure(rows []records.Row, start int64, duration time.Duration) bounded {
	n := int(duration / failWindow)
	sent, ok := make([]int, n), make([]int, n)
	for _, r := range rows {
		if r.Intended < start {
			continue
		}
		k := int((r.Intended - start) / int64(failWindow))
		if k >= n {
			continue
		}
		sent[k]++
		if answered200(r) {
			ok[k]++
		}
	}
	for k := range n {
		if sent[k] == 0 || float64(ok[k]) < failBelow*float64(sent[k]) {
			return bounded{(time.Duration(k) * failWindow).Seconds(), exact}
		}
	}
	return bounded{duration.Seconds(), atLeast}
}

// timeToRecover is the time from a fault (at, Unix ns) to the start of the
// first window of goodWindow that begins at a request's intended send time
// at or after it, ends within the step (end), and in which at least
// goodShare of the requests were answered 200. rows are in intended-time
// order. When no such window fits it is a lower bound: the rest of the
// step.
func timeToRecover(rows []records.Row, at, end int64) bounded {
	w := int64(goodWindow)
	i, _ := slices.BinarySearchFunc(rows, at, func(r records.Row, t int64) int { return cmp.Compare(r.Intended, t) })
	j, good := i, 0
	for ; i < len(rows) && rows[i].Intended+w <= end; i++ {
		for j < len(rows) && rows[j].Intended < rows[i].Intended+w {
			if answered200(rows[j]) {
				good++
			}
			j++
		}
		if float64(good) >= goodShare*float64(j-i) {
			return bounded{float64(rows[i].Intended-at) / 1e9, exact}
		}
		if answered200(rows[i]) {
			good--
		}
	}
	return bounded{float64(end-at) / 1e9, atLeast}
}

// losses classifies a step's requests by what became of them. Failed:
// answered, but with an error status or an answer that is no product page.
// Delayed: a page, but later (from its intended send time) than the
// gateway's own deadline for its calls. Lost: sent and never answered (a
// client timeout or a connection error, no status at all).
type losses struct {
	sent, failed, delayed, lost int
	// unsent are open-model arrivals the generator never sent before the
	// step ended: neither lost nor answered.
	unsent int64
}

func countLosses(rows []records.Row, callTimeoutMs float64) losses {
	l := losses{sent: len(rows)}
	for _, r := range rows {
		switch {
		case r.Status == 0:
			l.lost++
		case r.Status/100 != 2 || r.Error != "":
			l.failed++
		case r.LatencyMs > callTimeoutMs:
			l.delayed++
		}
	}
	return l
}

func (l *losses) add(o losses) {
	l.sent += o.sent
	l.failed += o.failed
	l.delayed += o.delayed
	l.lost += o.lost
	l.unsent += o.unsent
}

// faultStat is what one fault step of one variant in one repetition
// showed.
type faultStat struct {
	losses
	// fault is the step's first fault event in words, or why there is none
	// to measure recovery from.
	fault    string
	recovery bounded // from the fault to the first good window after it
	measured bool    // the fault happened, so recovery means something
}

// isFault is an event that breaks something; a resume or a link cleared
// mends, a request measures.
func isFault(ev results.EventRecord) bool {
	return ev.Action != "request" && ev.Action != "resume" && ev.Fault != "none"
}

// faultOf reads one fault unit: its losses, and its recovery from the
// first fault its events.json records. A fault that was not done (the
// event's error) or not recorded leaves recovery unmeasured and says why.
func (r *ipcRun) faultOf(st *study.Step, u *analysis.Unit) (faultStat, error) {
	rows, err := u.Dir.ReadRecords()
	if err != nil {
		return faultStat{}, err
	}
	out := faultStat{losses: countLosses(rows, r.callTimeoutMs)}
	out.unsent = u.Summary.Unsent
	evs, err := u.Dir.ReadEvents()
	if errors.Is(err, fs.ErrNotExist) {
		out.fault = "no events recorded"
		return out, nil
	}
	if err != nil {
		return faultStat{}, err
	}
	i := slices.IndexFunc(evs, isFault)
	if i < 0 {
		out.fault = "no fault among the events"
		return out, nil
	}
	ev := evs[i]
	out.fault = fmt.Sprintf("%s %s at %s s", ev.Action, ev.Target, strconv.FormatFloat(ev.AtS, 'f', -1, 64))
	if ev.Error != "" {
		out.fault += " (not done: " + ev.Error + ")"
		return out, nil
	}
	slices.SortFunc(rows, func(a, b records.Row) int { return cmp.Compare(a.Intended, b.Intended) })
	start := u.Summary.StartedAt.UnixNano()
	out.recovery = timeToRecover(rows, start+int64(ev.AtS*1e9), start+int64(stepWindow(st, u)))
	out.measured = true
	return out, nil
}

// readRecords reads the records of every overload and fault unit once.
func (r *ipcRun) readRecords() error {
	r.mttf, r.faultStats = map[*analysis.Unit]bounded{}, map[*analysis.Unit]faultStat{}
	for _, v := range r.ds.Variants {
		for _, l := range r.overload {
			for _, u := range r.ds.Units(v.Key(), l.step.Name) {
				rows, err := u.Dir.ReadRecords()
				if err != nil {
					return err
				}
				r.mttf[u] = timeToFailure(rows, u.Summary.StartedAt.UnixNano(), stepWindow(l.step, u))
			}
		}
		for _, st := range r.faults {
			for _, u := range r.ds.Units(v.Key(), st.Name) {
				f, err := r.faultOf(st, u)
				if err != nil {
					return err
				}
				r.faultStats[u] = f
			}
		}
	}
	return nil
}

// mttfRuns is the time to failure of a style at a delay in the overload
// step with that many users, by repetition.
func (r *ipcRun) mttfRuns(style, delay string, users float64) map[int]bounded {
	out := map[int]bounded{}
	if st := at(r.overload, users); st != nil {
		for _, u := range r.ds.Units(r.key(style, delay), st.Name) {
			out[u.Rep] = r.mttf[u]
		}
	}
	return out
}

// recoveryRuns is the recovery of a style at a delay from the fault of
// the steps matching where, by repetition; repetitions whose fault did not
// happen are left out.
func (r *ipcRun) recoveryRuns(style, delay string, where map[string]string) map[int]bounded {
	out := map[int]bounded{}
	for _, st := range r.ds.Steps(where) {
		for _, u := range r.ds.Units(r.key(style, delay), st.Name) {
			if f := r.faultStats[u]; f.measured {
				out[u.Rep] = f.recovery
			}
		}
	}
	return out
}

// availabilityRuns is MTTF / (MTTF + MTTR) by repetition: MTTF from the
// overload step with that many users, MTTR from the killed service, both
// of the same repetition, as the paper combined its two tests.
func (r *ipcRun) availabilityRuns(style, delay string, users float64) map[int]bounded {
	out := map[int]bounded{}
	mttr := r.recoveryRuns(style, delay, killSteps)
	for rep, f := range r.mttfRuns(style, delay, users) {
		if rec, ok := mttr[rep]; ok {
			if a, ok := availability(f, rec); ok {
				out[rep] = a
			}
		}
	}
	return out
}

func (r *ipcRun) availabilitySection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Availability: time to failure, time to recovery",
		Text: []string{
			fmt.Sprintf("Time to failure (MTTF), from each overload step (closed model): the time from the step's start to the first %.0f-s window, by the requests' intended send times, in which under %s of the requests were answered 200. "+
				"The paper ran until the services became unavailable; here each step is time-boxed, and a style that never failed within it has MTTF ≥ the step's duration: a lower bound, shown as ≥ N, never as a measurement.",
				failWindow.Seconds(), analysis.Pct(failBelow)),
			fmt.Sprintf("Time to recovery (MTTR), from the step that kills a service and starts it again: the time from the kill (events.json) to the start of the first %.0f-s window, beginning at a request's intended send time, with at least %s of the requests answered 200. "+
				"The paper waited for the first good minute; our fault steps last under a minute, so a minute-long window could never fit after the restart. A window that never fits before the step ends makes MTTR a lower bound.",
				goodWindow.Seconds(), analysis.Pct(goodShare)),
			"Availability = MTTF / (MTTF + MTTR), per repetition from the two steps of the same deployment; a bound when either is. Values are per repetition, in repetition order.",
			strings.TrimSpace(r.notMeasured(overloadSteps) + " " + r.notMeasured(killSteps)),
		},
	}
	header := []string{"variant"}
	for _, l := range r.overload {
		header = append(header, fmt.Sprintf("MTTF s, %.0f users", l.x), fmt.Sprintf("availability, %.0f users", l.x))
	}
	t := analysis.Table{
		Caption: "Per repetition; ≥ marks a lower bound, ≤ an upper bound. The paper's rows: time to failure at 200 users and recovery as published, availability computed from them.",
		Header:  append(header, "MTTR s (kill → first good window)", "fault"),
	}
	for _, delay := range r.delays {
		for _, style := range styles {
			k := r.key(style, delay)
			row := []string{k}
			for _, l := range r.overload {
				row = append(row, list(r.mttfRuns(style, delay, l.x), 0), list(r.availabilityRuns(style, delay, l.x), 3))
			}
			row = append(row, list(r.recoveryRuns(style, delay, killSteps), 1), r.faultWords(k, killSteps))
			t.Rows = append(t.Rows, row)
		}
	}
	for _, style := range styles {
		mttf, mttr := r.ds.PaperPoint("mttf-200", style), r.ds.PaperPoint("mttr", style)
		row := []string{"paper: " + style}
		for _, l := range r.overload {
			if l.x == 200 {
				row = append(row, analysis.Num(mttf, 0), analysis.Num(mttf/(mttf+mttr), 3))
			} else {
				row = append(row, "–", "–")
			}
		}
		t.Rows = append(t.Rows, append(row, analysis.Num(mttr, 0), "services overloaded, then restarted"))
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

// faultWords says what the fault of the steps matching where was in the
// first repetition of a variant that measured one.
func (r *ipcRun) faultWords(variant string, where map[string]string) string {
	for _, st := range r.ds.Steps(where) {
		if units := r.ds.Units(variant, st.Name); len(units) > 0 {
			return r.faultStats[units[0]].fault
		}
	}
	return "–"
}

func (r *ipcRun) lossSection() (analysis.Section, error) {
	sec := analysis.Section{
		Title: "Requests lost to faults",
		Text: []string{
			fmt.Sprintf("Each fault step sends a fixed arrival rate while a service is killed and started again, the broker restarted, or a service paused and resumed (events.json says when). Every request sent is counted from the records: failed (answered, but with an error status or no product page), delayed (a page, but later than the gateway's %s ms deadline for its calls, from its intended send time), or lost (sent and never answered: a client timeout or a connection error, no status at all). "+
				"Counts are summed over the repetitions, shares are of the requests sent; not sent are arrivals the generator could not send before the step ended. Recovered after: from the step's first fault to the first %.0f-s window with at least %s answered 200, per repetition.",
				analysis.Num(r.callTimeoutMs, 0), goodWindow.Seconds(), analysis.Pct(goodShare)),
			r.notMeasured(faultSteps),
		},
	}
	t := analysis.Table{Header: []string{"fault", "variant", "reps", "sent", "not sent", "failed", "delayed", "lost", "recovered after s", "fault event"}}
	for _, st := range r.faults {
		for _, delay := range r.delays {
			for _, style := range styles {
				k := r.key(style, delay)
				units := r.ds.Units(k, st.Name)
				if len(units) == 0 {
					continue
				}
				var sum losses
				rec := map[int]bounded{}
				for _, u := range units {
					f := r.faultStats[u]
					sum.add(f.losses)
					if f.measured {
						rec[u.Rep] = f.recovery
					}
				}
				share := func(n int) string {
					return fmt.Sprintf("%d (%s)", n, analysis.Pct(float64(n)/float64(max(sum.sent, 1))))
				}
				t.Rows = append(t.Rows, []string{st.Params["fault"], k, strconv.Itoa(len(units)), strconv.Itoa(sum.sent), strconv.FormatInt(sum.unsent, 10),
					share(sum.failed), share(sum.delayed), share(sum.lost), list(rec, 1), r.faultStats[units[0]].fault})
			}
		}
	}
	sec.Tables = append(sec.Tables, t)
	return sec, nil
}

// lostShareRuns is, by repetition, the share of requests a style lost at
// a delay in a fault step.
func (r *ipcRun) lostShareRuns(style, delay, step string) map[int]float64 {
	out := map[int]float64{}
	for _, u := range r.ds.Units(r.key(style, delay), step) {
		f := r.faultStats[u]
		out[u.Rep] = float64(f.lost) / float64(max(f.sent, 1))
	}
	return out
}
