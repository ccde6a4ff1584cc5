package frameworks

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/stats"
)

// headN is how many of a step's first requests the warm-up chart draws.
const headN = 50

// recStats is what one unit's records show: success both ways, and the
// first requests apart from the rest.
type recStats struct {
	n int
	// ok200 were answered 200 at all (whatever the body: the thesis
	// counted the status); inPause were answered 200 within the pause,
	// k6's success; late were answered 200 after it.
	ok200, inPause, late int
	// pastAttempt outlived go-micro's time-out for one RPC attempt
	// (retries.go): answered later than it, whatever the status, or never.
	pastAttempt int
	// firstMedian is the median of the first firstN requests by send time,
	// restMedian of the others; restP50 and restP95 are the others'
	// percentiles, allP50 and allP95 every request's (all exact, from the
	// records).
	firstMedian, restMedian float64
	restP50, restP95        float64
	allP50, allP95          float64
	// head are the latencies of the first headN requests in send order.
	head []float64
}

// readRecords reads every unit's records once. A unit without records
// (made in memory, or a damaged file) is named in unreadable and has no
// stats.
func (r *fwRun) readRecords() {
	for _, c := range r.cases {
		for _, v := range r.ds.Variants {
			for _, u := range r.ds.Units(v.Key(), c.step.Name) {
				rows, err := readRows(u)
				if err != nil {
					r.unreadable = append(r.unreadable, fmt.Sprintf("%s %s repetition %d: %v", v.Key(), c.step.Name, u.Rep, err))
					continue
				}
				r.stats[u] = summarise(rows, c.pauseMs)
			}
		}
	}
}

func readRows(u *analysis.Unit) ([]records.Row, error) {
	if u.Dir == "" {
		return nil, fmt.Errorf("no records file")
	}
	return u.Dir.ReadRecords()
}

// summarise computes a unit's record statistics; pauseMs is k6's time-out.
func summarise(rows []records.Row, pauseMs float64) *recStats {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b records.Row) int {
		return cmp.Or(cmp.Compare(a.Sent, b.Sent), cmp.Compare(a.Seq, b.Seq))
	})
	s := &recStats{n: len(rows)}
	lat := make([]float64, len(rows))
	for i, row := range rows {
		lat[i] = row.LatencyMs
		if row.LatencyMs > microAttemptMs {
			s.pastAttempt++
		}
		if row.Status != 200 {
			continue
		}
		s.ok200++
		if row.LatencyMs <= pauseMs {
			s.inPause++
		} else {
			s.late++
		}
	}
	k := min(firstN, len(lat))
	s.firstMedian = stats.Median(lat[:k])
	rest := lat[k:]
	s.restMedian = stats.Median(rest)
	s.restP50, s.restP95 = stats.Quantile(rest, 0.5), stats.Quantile(rest, 0.95)
	s.allP50, s.allP95 = stats.Quantile(lat, 0.5), stats.Quantile(lat, 0.95)
	s.head = slices.Clone(lat[:min(headN, len(lat))])
	return s
}

// rec is a unit's record statistics, nil when its records were not read.
func (r *fwRun) rec(u *analysis.Unit) *recStats { return r.stats[u] }

// fromRecords turns a statistic of the records into a per-unit value, NaN
// where the records were not read.
func (r *fwRun) fromRecords(f func(s *recStats) float64) func(u *analysis.Unit) float64 {
	return func(u *analysis.Unit) float64 {
		s := r.rec(u)
		if s == nil || s.n == 0 {
			return analysis.NaN
		}
		return f(s)
	}
}

// The per-record statistics the sections and metrics use.
func share200(s *recStats) float64         { return float64(s.ok200) / float64(s.n) }
func sharePause(s *recStats) float64       { return float64(s.inPause) / float64(s.n) }
func lateCount(s *recStats) float64        { return float64(s.late) }
func failedCount(s *recStats) float64      { return float64(s.n - s.ok200) }
func sharePastAttempt(s *recStats) float64 { return float64(s.pastAttempt) / float64(s.n) }
func warmup(s *recStats) float64           { return s.firstMedian / s.restMedian }
func steadyTail(s *recStats) float64       { return s.restP95 / s.restP50 }
func recordsTail(s *recStats) float64      { return s.allP95 / s.allP50 }
func firstMedianOf(s *recStats) float64    { return s.firstMedian }
func restMedianOf(s *recStats) float64     { return s.restMedian }
