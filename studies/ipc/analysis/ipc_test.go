package ipc

import (
	"cmp"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/claims/claimstest"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/results/resultstest"
	"github.com/msbench/msbench/internal/study"
)

var t0 = time.Unix(1_700_000_000, 0)

// loadStudy reads the study file itself, so that the tests exercise the
// parameters and durations the study really has; reps and delays trim it.
func loadStudy(t *testing.T, profile string, reps int, delays ...string) *study.Study {
	t.Helper()
	s, err := study.Load("../"+study.FileName, profile)
	if err != nil {
		t.Fatal(err)
	}
	s.Repetitions = reps
	if delays != nil {
		for i := range s.Variants {
			if s.Variants[i].Name == "delay" {
				s.Variants[i].Values = delays
			}
		}
	}
	return s
}

// request is one synthetic request at ms after t0, answered lat ms after
// its intended time with status (0: never answered) and err.
func request(seq int, ms, lat float64, status uint16, err metrics.ErrorClass) metrics.Record {
	at := t0.Add(time.Duration(ms * 1e6)).UnixNano()
	return metrics.Record{Seq: uint64(seq), Intended: at, Sent: at, Done: at + int64(lat*1e6), Status: status, Err: err}
}

// series is a request every every ms for dur ms; bad says which fail, and
// how.
func series(dur, every float64, bad func(ms float64) (uint16, metrics.ErrorClass, bool)) []metrics.Record {
	var out []metrics.Record
	for i := 0; float64(i)*every < dur; i++ {
		ms := float64(i) * every
		status, class, failed := bad(ms)
		if !failed {
			status, class = 200, metrics.OK
		}
		out = append(out, request(i, ms, 20, status, class))
	}
	return out
}

// recordsUnit writes recs (and events) as a step directory, as the runner
// would, and returns the unit reading it.
func recordsUnit(t *testing.T, v study.Variant, step string, rep int, recs []metrics.Record, events []results.EventRecord) *analysis.Unit {
	t.Helper()
	dir := results.StepDir(t.TempDir())
	sum := resultstest.WriteOpenStep(t, dir, recs, 50)
	if events != nil {
		if err := dir.WriteEvents(events); err != nil {
			t.Fatal(err)
		}
	}
	return &analysis.Unit{Rep: rep, Variant: v, Step: step, Dir: dir, Summary: sum}
}

func closedUnit(v study.Variant, step string, rep int, successes int64, mean float64) *analysis.Unit {
	return &analysis.Unit{Rep: rep, Variant: v, Step: step, Summary: metrics.Summary{
		Requests: successes, Successes: successes, SuccessRate: 1,
		Latency: metrics.Distribution{Mean: mean, P50: mean, P95: 2 * mean, P99: 3 * mean, Max: 5 * mean},
	}}
}

func openUnit(v study.Variant, step string, rep int, rate, p50, p99 float64, answered float64) *analysis.Unit {
	n := int64(30 * rate)
	return &analysis.Unit{Rep: rep, Variant: v, Step: step, Summary: metrics.Summary{
		Requests: n, Successes: int64(answered * float64(n)), AchievedRPS: rate,
		Latency: metrics.Distribution{P50: p50, P99: p99},
	}}
}

var (
	// Requests per 180 s at 50, 100 and 200 users: gRPC ahead at 50 and
	// 100, RabbitMQ at 200, keeping most of its throughput.
	synthTput = map[string]map[string]int64{
		rest: {"50": 4300, "100": 4300, "200": 3900},
		grpc: {"50": 4400, "100": 4500, "200": 4000},
		amqp: {"50": 4200, "100": 4350, "200": 4480},
	}
	synthMean = map[string]float64{rest: 130, grpc: 100, amqp: 120} // ms
	// Time to failure in a 60-s overload step (0: never), and recovery
	// from the kill at 10 s, in seconds.
	synthFailAt  = map[string]float64{rest: 20, grpc: 30, amqp: 0}
	synthRecover = map[string]float64{rest: 6, grpc: 6, amqp: 9}
	// The last rate each style holds: REST 40, gRPC 80, RabbitMQ every
	// rate of the sweep (10 to 160).
	synthHolds = map[string]float64{rest: 40, grpc: 80, amqp: 160}
	// What each ms of one-way delay adds to an open step's p50, from 10 ms
	// at 0 ms, with a repetition's own wobble: RabbitMQ pays a little
	// more than one round trip.
	synthCost   = map[string]float64{rest: 2, grpc: 2, amqp: 2.6}
	synthWobble = map[int]float64{1: 0, 2: 0.1, 3: -0.1}
)

// synthDataset is a run whose answers are known: every step of the study
// for three repetitions at two delays; at 5ms REST leads at 100 users.
func synthDataset(t *testing.T) *analysis.Dataset {
	t.Helper()
	s := loadStudy(t, "", 3, "0ms", "5ms")
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		style := v.Get("style")
		for rep := 1; rep <= s.Repetitions; rep++ {
			for _, st := range s.Load.Steps {
				switch st.Params["kind"] {
				case "closed":
					n := synthTput[style][st.Params["users"]]
					if v.Get("delay") == "5ms" && style == rest && st.Params["users"] == "100" {
						n = 5000
					}
					units = append(units, closedUnit(v, st.Name, rep, n, synthMean[style]))
				case "open":
					rate, err := strconv.ParseFloat(st.Params["rate"], 64)
					if err != nil {
						t.Fatal(err)
					}
					p99 := 40.0
					if rate > synthHolds[style] {
						p99 = 4000
					}
					ms := map[string]float64{"0ms": 0, "5ms": 5}[v.Get("delay")]
					p50 := 10 + (synthCost[style]+synthWobble[rep])*ms
					units = append(units, openUnit(v, st.Name, rep, rate, p50, p99, 1))
				case "overload":
					st.Load.Duration = time.Minute
					failAt := synthFailAt[style]
					recs := series(60_000, 100, func(ms float64) (uint16, metrics.ErrorClass, bool) {
						return 502, metrics.Status, failAt > 0 && ms >= failAt*1000
					})
					units = append(units, recordsUnit(t, v, st.Name, rep, recs, nil))
				case "fault":
					units = append(units, faultUnit(t, v, st, rep))
				}
			}
		}
	}
	return analysis.NewDataset(s, units)
}

// faultUnit: the killed service fails pages from the kill until the
// style's recovery; the broker restart loses 3 of RabbitMQ's requests; the
// pause fails nothing.
func faultUnit(t *testing.T, v study.Variant, st *study.Step, rep int) *analysis.Unit {
	style := v.Get("style")
	var bad func(ms float64) (uint16, metrics.ErrorClass, bool)
	events := []results.EventRecord{}
	for _, ev := range st.Events {
		events = append(events, results.EventRecord{AtS: ev.At.Seconds(), DoneS: ev.At.Seconds(), Action: ev.Action, Target: ev.Target})
	}
	switch st.Params["fault"] {
	case "kill-service":
		bad = func(ms float64) (uint16, metrics.ErrorClass, bool) {
			return 502, metrics.Status, ms >= 10_000 && ms < (10+synthRecover[style])*1000
		}
	case "restart-broker":
		bad = func(ms float64) (uint16, metrics.ErrorClass, bool) {
			return 0, metrics.Timeout, style == amqp && ms >= 10_000 && ms < 10_060
		}
	default:
		bad = func(float64) (uint16, metrics.ErrorClass, bool) { return 0, 0, false }
	}
	return recordsUnit(t, v, st.Name, rep, series(40_000, 20, bad), events)
}

// Every claim of claims.yaml, judged on the metrics of a run whose answer
// is known.
func TestVerdicts(t *testing.T) {
	ds := synthDataset(t)
	res, err := ipc{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	file, err := claims.Load("../" + claims.FileName)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"grpc-over-rest-50":            claims.Reproduced,  // 4400 / 4300
		"grpc-over-amqp-50":            claims.Reproduced,  // 4400 / 4200
		"grpc-over-rest-100":           claims.Reproduced,  // 4500 / 4300
		"grpc-over-amqp-100":           claims.Reproduced,  // 4500 / 4350
		"amqp-over-rest-100":           claims.Reproduced,  // 4350 / 4300 = 1.0116, the same in every repetition
		"grpc-fastest-response-100":    claims.Reproduced,  // 100 / 120
		"amqp-over-grpc-200":           claims.Reproduced,  // 4480 / 4000
		"amqp-over-rest-200":           claims.Reproduced,  // 4480 / 3900
		"sync-degrades-sharply":        claims.Reproduced,  // (4480/4350) / (3900/4300) = 1.135
		"mttf-amqp-over-grpc":          claims.Reproduced,  // ≥ 60 / 30
		"mttf-grpc-over-rest":          claims.Reproduced,  // 30 / 20
		"mttr-sync-alike":              claims.Reproduced,  // 6 / 6
		"mttr-amqp-slower":             claims.Reproduced,  // 9 / 6
		"async-better-efficiency":      claims.Reproduced,  // (0.9655 · 0.9886 · 1.1342)^(1/3) = 1.027
		"async-better-availability":    claims.Reproduced,  // ≥ 60/69 over (20/26 + 30/36)/2 = ≥ 1.085
		"knee-amqp-highest":            claims.Holds,       // ≥ 160 / 80
		"kill-service-loses-nothing":   claims.Holds,       // the gateway answers 502
		"broker-restart-loses-nothing": claims.DoesNotHold, // 3 of 2000 never answered
		"pause-service-loses-nothing":  claims.Holds,       // nothing failed
		"distance-costs-alike":         claims.Holds,       // rest−grpc 0, rest−amqp and grpc−amqp −0.6 ms per ms, each within ±1
	}
	claimstest.Verdicts(t, file, res.Metrics, nil, 3, want)
	// A style against the others is both pairwise ratios, not one over
	// the best of the others (issue 20, item 8).
	for id, labels := range map[string]string{
		"resp-grpc-vs-others-100": "grpc/rest grpc/amqp", "kept-amqp-vs-sync-200": "amqp/rest amqp/grpc",
		"mttr-amqp-vs-sync": "amqp/rest amqp/grpc", "knee-amqp-vs-sync": "amqp/rest amqp/grpc",
		// Findings about every style: each pair's difference, each
		// style's loss, not the range or the worst.
		"delay-cost-spread": "rest−grpc rest−amqp grpc−amqp", "lost-share-restart-broker": "rest grpc amqp",
	} {
		var got []string
		for _, p := range res.Metrics[id].All {
			got = append(got, p.Label)
		}
		if strings.Join(got, " ") != labels {
			t.Errorf("%s compares %q, want %s", id, got, labels)
		}
	}
	if got := res.Metrics["mttf-amqp-vs-grpc-200"].PerRun[0]; got != 2 {
		t.Errorf("amqp/grpc time to failure %v, want the lower bound 60/30 = 2", got)
	}
	for _, p := range res.Metrics["delay-cost-spread"].All {
		want := map[string]float64{"rest−grpc": 0, "rest−amqp": -0.6, "grpc−amqp": -0.6}[p.Label]
		if len(p.PerRun) != 3 || math.Abs(p.PerRun[0]-want) > 1e-9 {
			t.Errorf("%s in the cost of distance %v, want %v ms per ms in each of 3 repetitions", p.Label, p.PerRun, want)
		}
	}
	for _, p := range res.Metrics["lost-share-restart-broker"].All {
		want := map[string]float64{amqp: 3.0 / 2000}[p.Label]
		if len(p.PerRun) != 3 || p.PerRun[0] != want {
			t.Errorf("share %s lost to the broker restart %v, want %v in each of 3 repetitions", p.Label, p.PerRun, want)
		}
	}
}

// The report's sections draw and say what the synthetic run holds.
func TestSections(t *testing.T) {
	ds := synthDataset(t)
	var err error
	if ds.Claims, err = claims.Load("../" + claims.FileName); err != nil {
		t.Fatal(err)
	}
	res, err := ipc{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	sec := func(prefix string) analysis.Section {
		for _, s := range res.Sections {
			if strings.HasPrefix(s.Title, prefix) {
				return s
			}
		}
		t.Fatalf("no section %q", prefix)
		return analysis.Section{}
	}
	if n := len(sec("Throughput against users").Figures); n != 1 {
		t.Errorf("throughput: %d figures, want the bars beside the paper's", n)
	}
	if n := len(sec("Latency against users").Figures); n != 3 {
		t.Errorf("latency: %d figures, want p50, p95, p99", n)
	}
	// At 0ms gRPC leads at 100 users; at 5ms REST does.
	for _, row := range sec("Throughput and latency against link delay").Tables[0].Rows {
		if row[0] != "100" {
			continue
		}
		if lead := strings.Fields(row[2])[0]; lead != map[string]string{"0ms": grpc, "5ms": rest}[row[1]] {
			t.Errorf("at %s the ranking is %s", row[1], row[2])
		}
	}
	distance := sec("Throughput and latency against link delay")
	if len(distance.Tables) != 3 || len(distance.Figures) != 3 {
		t.Fatalf("link delay: %d tables and %d figures, want closed and open rankings and the cost, and three curves", len(distance.Tables), len(distance.Figures))
	}
	for _, row := range distance.Tables[1].Rows {
		if row[0] == "10" && row[1] == "5ms" && row[2] != "rest 20.0 < grpc 20.0 < amqp 23.0" {
			t.Errorf("open ranking at 10/s and 5ms: %q", row[2])
		}
	}
	cost := map[string]string{}
	for _, row := range distance.Tables[2].Rows {
		cost[row[0]] = row[2] + " | " + row[3]
	}
	// RabbitMQ: 5 ms of delay add 13 ms (2.6 ms per ms), 12.5 to 13.5 by
	// repetition; REST 10.
	if !strings.HasPrefix(cost[amqp], "13.0 (") || !strings.HasSuffix(cost[amqp], "| 2.60, 2.70, 2.50") || !strings.HasPrefix(cost[rest], "10.0 (") {
		t.Errorf("the cost of distance per style: %v", cost)
	}
	knees := sec("Knee").Tables[0]
	for _, row := range knees.Rows {
		want := map[string]string{"rest-0ms": "40; 40; 40", "grpc-0ms": "80; 80; 80", "amqp-0ms": "≥ 160 (beyond the sweep); ≥ 160 (beyond the sweep); ≥ 160 (beyond the sweep)"}[row[0]]
		if want != "" && row[1] != want {
			t.Errorf("knee of %s: %q, want %q", row[0], row[1], want)
		}
	}
	avail := sec("Availability").Tables[0]
	// variant, then MTTF and availability per overload step, MTTR, fault;
	// recovery 8.96 s and 5.96 s (see TestTimeToRecover).
	want := map[string][]string{
		"amqp-0ms":    {"≥ 60, ≥ 60, ≥ 60", "≥ 0.870, ≥ 0.870, ≥ 0.870", "≥ 60, ≥ 60, ≥ 60"},
		"rest-0ms":    {"20, 20, 20", "0.770, 0.770, 0.770", "20, 20, 20"},
		"paper: amqp": {"420", "0.933", "–"},
	}
	mttr := map[string]string{"amqp-0ms": "9.0, 9.0, 9.0", "rest-0ms": "6.0, 6.0, 6.0", "paper: amqp": "30"}
	seen := 0
	for _, row := range avail.Rows {
		if w, ok := want[row[0]]; ok {
			seen++
			if strings.Join(row[1:4], "|") != strings.Join(w, "|") || row[7] != mttr[row[0]] {
				t.Errorf("availability row %v, want %v and MTTR %s", row, w, mttr[row[0]])
			}
		}
	}
	if seen != len(want) {
		t.Errorf("availability rows %v", avail.Rows)
	}
	var paper []string
	ours := map[string]string{}
	for _, row := range sec("Throughput against users").Tables[1].Rows {
		paper = append(paper, row[2])
		ours[row[1]] = row[3]
	}
	if strings.Join(paper, " ") != "43 147 25 200.0 200.0 4480 -132 -146 not published not published not published" {
		t.Errorf("the paper's figures beside ours: %v", paper)
	}
	// gRPC ahead in response is shown against each other style, not the
	// better of the two.
	for figure, want := range map[string]string{"REST's mean response − gRPC's, ms": "30.0 (", "RabbitMQ's mean response − gRPC's, ms": "20.0 ("} {
		if !strings.HasPrefix(ours[figure], want) {
			t.Errorf("%s: %q, want %s…", figure, ours[figure], want)
		}
	}
}

// The loss table counts, from the records, what became of every request
// of a fault step.
func TestLossTable(t *testing.T) {
	s := loadStudy(t, "", 1, "0ms")
	v, _ := analysis.NewDataset(s, nil).Variant(map[string]string{"style": rest, "delay": "0ms"})
	var recs []metrics.Record
	add := func(n int, lat float64, status uint16, err metrics.ErrorClass) {
		for range n {
			recs = append(recs, request(len(recs), float64(len(recs))*20, lat, status, err))
		}
	}
	// Half a second past the page deadline the study file gives the
	// gateway, as the analysis reads it.
	plain, err := newRun(analysis.NewDataset(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	late := plain.callTimeoutMs + 500
	add(80, 20, 200, metrics.OK)
	add(5, 20, 502, metrics.Status)    // failed: an error status
	add(3, 20, 200, metrics.Body)      // failed: a 200 that is no product page
	add(4, late, 200, metrics.OK)      // delayed: past the deadline
	add(6, 10_000, 0, metrics.Timeout) // lost
	add(2, 1, 0, metrics.Refused)      // lost
	add(1, late, 504, metrics.Status)  // failed, however late
	var units []*analysis.Unit
	for _, st := range s.Load.Steps {
		if st.Params["fault"] == "kill-service" {
			units = append(units, recordsUnit(t, v, st.Name, 1, recs, []results.EventRecord{{AtS: 10, DoneS: 10, Action: "kill", Target: "reviews"}}))
		}
	}
	res, err := ipc{}.Analyze(analysis.NewDataset(s, units))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, sec := range res.Sections {
		if sec.Title == "Requests lost to faults" {
			rows = sec.Tables[0].Rows
		}
	}
	want := []string{"kill-service", "rest-0ms", "1", "101", "0", "9 (8.9%)", "4 (4.0%)", "8 (7.9%)"}
	if len(rows) != 1 || strings.Join(rows[0][:len(want)], "|") != strings.Join(want, "|") {
		t.Fatalf("loss rows %v, want %v", rows, want)
	}
	if rows[0][9] != "kill reviews at 10 s" {
		t.Errorf("fault event %q", rows[0][9])
	}
	// Only rest was measured: its loss is a comparison, and grpc's and
	// amqp's stay, empty, so that losing nothing cannot hold on rest alone.
	lost := res.Metrics["lost-share-kill-service"]
	if len(lost.All) != 3 || lost.All[0].Label != rest || len(lost.All[0].PerRun) != 1 || lost.All[0].PerRun[0] != 8.0/101 || len(lost.All[1].PerRun)+len(lost.All[2].PerRun) != 0 {
		t.Errorf("lost share %+v, want rest's 8/101 and grpc and amqp unmeasured", lost)
	}
}

// Recovery is measured from the first fault that happened, and only then.
func TestFaultEvent(t *testing.T) {
	s := loadStudy(t, "", 1, "0ms")
	r := &ipcRun{ds: analysis.NewDataset(s, nil), callTimeoutMs: defaultCallTimeoutMs}
	v, _ := r.ds.Variant(map[string]string{"style": grpc, "delay": "0ms"})
	st := r.ds.Steps(killSteps)[0]
	recs := series(40_000, 20, func(ms float64) (uint16, metrics.ErrorClass, bool) {
		return 502, metrics.Status, ms >= 10_000 && ms < 12_000
	})
	for _, c := range []struct {
		name     string
		events   []results.EventRecord
		fault    string
		measured bool
	}{
		{"no events.json", nil, "no events recorded", false},
		{"a kill not done", []results.EventRecord{{AtS: 10, Action: "kill", Target: "reviews", Error: "no such process"}}, "kill reviews at 10 s (not done: no such process)", false},
		{"a request first, then the kill", []results.EventRecord{{AtS: 5, Action: "request"}, {AtS: 10, DoneS: 10, Action: "kill", Target: "reviews"}}, "kill reviews at 10 s", true},
		{"only a resume", []results.EventRecord{{AtS: 15, Action: "resume", Target: "reviews"}}, "no fault among the events", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := r.faultOf(st, recordsUnit(t, v, st.Name, 1, recs, c.events))
			if err != nil {
				t.Fatal(err)
			}
			if f.fault != c.fault || f.measured != c.measured || f.sent != 2000 || f.failed != 100 {
				t.Errorf("fault %+v", f)
			}
			if c.measured && (f.recovery.dir != exact || f.recovery.v < 1.9 || f.recovery.v > 2) {
				t.Errorf("recovery %v, want just under 2 s", f.recovery)
			}
		})
	}
}

func TestTimeToFailure(t *testing.T) {
	ok := func(ms float64) (uint16, metrics.ErrorClass, bool) { return 0, 0, false }
	from := func(s float64, status uint16) func(ms float64) (uint16, metrics.ErrorClass, bool) {
		return func(ms float64) (uint16, metrics.ErrorClass, bool) { return status, metrics.Status, ms >= s*1000 }
	}
	for _, c := range []struct {
		name     string
		recs     []metrics.Record
		duration time.Duration
		want     bounded
	}{
		{"never failed: the step's length, a lower bound", series(60_000, 100, ok), time.Minute, bounded{60, atLeast}},
		{"fails from 25 s: the window from 20 s has 50 of 100", series(60_000, 100, from(25, 502)), time.Minute, bounded{30, exact}},
		{"fails from 24 s: the window from 20 s has 40 of 100", series(60_000, 100, from(24, 502)), time.Minute, bounded{20, exact}},
		{"lost requests count as failed", series(60_000, 100, from(10, 0)), time.Minute, bounded{10, exact}},
		{"nothing sent from 30 s: every user waiting", series(30_000, 100, ok), time.Minute, bounded{30, exact}},
		{"a step shorter than a window", series(5_000, 100, ok), 5 * time.Second, bounded{5, atLeast}},
		{"a last partial window is not judged", series(65_000, 100, from(61, 502)), 65 * time.Second, bounded{65, atLeast}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := timeToFailure(rows(t, c.recs), t0.UnixNano(), c.duration); got != c.want {
				t.Errorf("MTTF %v, want %v", got, c.want)
			}
		})
	}
}

func TestTimeToRecover(t *testing.T) {
	failing := func(from, to float64) func(ms float64) (uint16, metrics.ErrorClass, bool) {
		return func(ms float64) (uint16, metrics.ErrorClass, bool) { return 502, metrics.Status, ms >= from && ms < to }
	}
	kill, end := t0.Add(10*time.Second).UnixNano(), t0.Add(40*time.Second).UnixNano()
	for _, c := range []struct {
		name string
		recs []metrics.Record
		want bounded
	}{
		// A 5-s window holds 250 requests, so it may begin at the
		// second-to-last failure (15.96 s) with 248 answered: 99.2%.
		{"down from the kill to 16 s", series(40_000, 20, failing(10_000, 16_000)), bounded{5.96, exact}},
		{"no effect", series(40_000, 20, failing(0, 0)), bounded{0, exact}},
		{"never recovers: the rest of the step", series(40_000, 20, failing(10_000, 40_000)), bounded{30, atLeast}},
		{"recovers too late for a whole window", series(40_000, 20, failing(10_000, 35_100)), bounded{30, atLeast}},
		// 2 failures among the 250 requests of a 5-s window leave 99.2%.
		{"a blip within 1% is no outage", series(40_000, 20, failing(12_000, 12_040)), bounded{0, exact}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := timeToRecover(rows(t, c.recs), kill, end)
			if got.dir != c.want.dir || got.v < c.want.v-1e-9 || got.v > c.want.v+1e-9 {
				t.Errorf("MTTR %v, want %v", got, c.want)
			}
		})
	}
}

// rows is recs as the records file gives them back.
func rows(t *testing.T, recs []metrics.Record) []records.Row {
	t.Helper()
	dir := results.StepDir(t.TempDir())
	resultstest.WriteOpenStep(t, dir, recs, 50)
	out, err := dir.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b records.Row) int { return cmp.Compare(a.Intended, b.Intended) })
	return out
}

func TestKnee(t *testing.T) {
	p := func(rate, p99, success float64) ratePoint { return ratePoint{rate, p99, success} }
	for _, c := range []struct {
		name   string
		points []ratePoint
		want   bounded
	}{
		{"within the sweep", []ratePoint{p(50, 10, 1), p(100, 20, 1), p(200, 5000, 1)}, bounded{100, exact}},
		{"too few answered", []ratePoint{p(50, 10, 1), p(100, 20, 0.98)}, bounded{50, exact}},
		{"beyond the sweep", []ratePoint{p(50, 10, 1), p(100, 20, 1)}, bounded{100, atLeast}},
		{"below the sweep", []ratePoint{p(50, 1000, 1), p(100, 20, 1)}, bounded{50, atMost}},
		{"a rate that holds again after one that did not still ends the knee", []ratePoint{p(50, 10, 1), p(100, 2000, 1), p(200, 20, 1)}, bounded{50, exact}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := knee(c.points); !ok || got != c.want {
				t.Errorf("knee %v, want %v", got, c.want)
			}
		})
	}
	if _, ok := knee(nil); ok {
		t.Error("a knee of no rates")
	}
}

func TestBounds(t *testing.T) {
	e, ge, le := func(v float64) bounded { return bounded{v, exact} }, func(v float64) bounded { return bounded{v, atLeast} }, func(v float64) bounded { return bounded{v, atMost} }
	for _, c := range []struct {
		name string
		got  func() (bounded, bool)
		want bounded
		ok   bool
	}{
		{"exact / exact", func() (bounded, bool) { return ratio(e(6), e(3)) }, e(2), true},
		{"at least / exact is at least", func() (bounded, bool) { return ratio(ge(60), e(30)) }, ge(2), true},
		{"exact / at least is at most", func() (bounded, bool) { return ratio(e(30), ge(60)) }, le(0.5), true},
		{"two lower bounds order nothing", func() (bounded, bool) { return ratio(ge(60), ge(60)) }, bounded{}, false},
		{"at least / at most is at least", func() (bounded, bool) { return ratio(ge(800), le(50)) }, ge(16), true},
		{"a zero divisor", func() (bounded, bool) { return ratio(e(1), e(0)) }, bounded{}, false},
		{"availability of exact times", func() (bounded, bool) { return availability(e(30), e(10)) }, e(0.75), true},
		{"availability with MTTF beyond the step is at least", func() (bounded, bool) { return availability(ge(90), e(10)) }, ge(0.9), true},
		{"availability with recovery beyond the step is at most", func() (bounded, bool) { return availability(e(30), ge(10)) }, le(0.75), true},
		{"both beyond their steps: unknown", func() (bounded, bool) { return availability(ge(30), ge(10)) }, bounded{}, false},
		{"failed at once", func() (bounded, bool) { return availability(e(0), e(10)) }, e(0), true},
		{"mean with a lower bound", func() (bounded, bool) { return mean([]bounded{e(0.8), ge(0.9)}) }, ge(0.85), true},
		{"mean of bounds both ways", func() (bounded, bool) { return mean([]bounded{le(0.8), ge(0.9)}) }, bounded{}, false},
		{"a lower bound above 1 settles the order", func() (bounded, bool) { return keep(order, ge(2)) }, ge(2), true},
		{"a lower bound under 1 does not", func() (bounded, bool) { return keep(order, ge(0.7)) }, bounded{}, false},
		{"an upper bound under 1 does", func() (bounded, bool) { return keep(order, le(0.5)) }, le(0.5), true},
		{"a likeness keeps exact values", func() (bounded, bool) { return keep(measuredOnly, e(1.1)) }, e(1.1), true},
		{"and no bound", func() (bounded, bool) { return keep(measuredOnly, ge(1.1)) }, bounded{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.got()
			if ok != c.ok || (ok && (got.dir != c.want.dir || got.v < c.want.v-1e-9 || got.v > c.want.v+1e-9)) {
				t.Errorf("got %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// keep applies a ratio's keeper, keeping the bound for comparison.
func keep(k func(bounded) (float64, bool), q bounded) (bounded, bool) {
	_, ok := k(q)
	if !ok {
		return bounded{}, false
	}
	return q, true
}

// What a run skipped (the lowest and highest rate, two overload steps,
// the pause fault, the 1 and 5 ms delays, as an earlier quick profile
// did, with its 15 s overload) and what a variant lacks are named in the
// sections that would have shown them; a doubly censored MTTF ratio keeps
// a note saying why it orders nothing.
func TestUnmeasuredIsNamed(t *testing.T) {
	s := loadStudy(t, "", 1, "0ms")
	s.Load.Steps = slices.DeleteFunc(s.Load.Steps, func(st *study.Step) bool {
		return slices.Contains([]string{"rate-10", "rate-160", "fault-pause-service", "overload-300", "overload-400"}, st.Name)
	})
	for _, st := range s.Load.Steps {
		if st.Params["kind"] == "overload" {
			st.Load.Duration = 15 * time.Second // shorter than the records below
		}
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../" + study.FileName)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, study.FileName), src, 0o644); err != nil {
		t.Fatal(err)
	}
	var units []*analysis.Unit
	for _, v := range s.Matrix() {
		for _, st := range s.Load.Steps {
			if st.Params["kind"] == "overload" && v.Get("delay") == "0ms" {
				units = append(units, recordsUnit(t, v, st.Name, 1, series(30_000, 100, func(float64) (uint16, metrics.ErrorClass, bool) { return 0, 0, false }), nil))
			}
			if st.Params["kind"] == "closed" && v.Get("style") != amqp {
				units = append(units, closedUnit(v, st.Name, 1, 4000, 100))
			}
		}
	}
	ds := analysis.NewDataset(s, units)
	ds.Dir = dir
	res, err := ipc{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, sec := range res.Sections {
		text[sec.Title] = strings.Join(sec.Text, "\n")
	}
	for title, want := range map[string][]string{
		"Knee of the open-model sweep":                       {"rate-10 (every variant)", "rate-160 (every variant)", "rest-0ms rate-40"},
		"Availability: time to failure, time to recovery":    {"overload-300 (every variant)", "overload-400 (every variant)", "amqp-0ms fault-kill-service"},
		"Throughput against users (the paper's 180-s tests)": {"amqp-0ms users-50", "amqp-0ms users-200"},
		"Requests lost to faults":                            {"grpc-0ms fault-restart-broker", "fault-pause-service (every variant)"},
	} {
		for _, w := range want {
			if !strings.Contains(text[title], w) {
				t.Errorf("section %q does not name %q:\n%s", title, w, text[title])
			}
		}
	}
	if strings.Contains(text["Throughput against users (the paper's 180-s tests)"], "rest-0ms users-50") {
		t.Error("a measured step named as not measured")
	}
	m, ok := res.Metrics["mttf-amqp-vs-grpc-200"]
	if !ok || len(m.PerRun) != 0 || !strings.Contains(m.Note, "1 repetition(s) left out") {
		t.Errorf("every style outlasted the step: %+v", m)
	}
	if _, ok := res.Metrics["tput-grpc-vs-amqp-50"]; ok {
		t.Error("a ratio to a style that was not measured")
	}
}

// A study file without the steps the analysis reads is refused, naming
// what is missing; the study's own file passes, claims and all.
func TestNeeds(t *testing.T) {
	s := loadStudy(t, "", 5)
	if err := analysis.Check(s); err != nil {
		t.Fatalf("studies/ipc: %v", err)
	}
	var kept []*study.Step
	for _, st := range s.Load.Steps {
		if st.Params["kind"] != "overload" {
			kept = append(kept, st)
		}
	}
	s.Load.Steps = kept
	err := s.Check(ipc{}.Needs())
	if err == nil || !strings.Contains(err.Error(), "needs a step with params kind=overload") {
		t.Fatalf("a study without overload steps: %v", err)
	}
}

// A style whose farthest delay failed its noise audit in every repetition
// leaves the finding on distance open: its comparisons stay, unmeasured,
// and the note says why; the pair still measured cannot settle it alone.
func TestDistanceWithAFailedAudit(t *testing.T) {
	res := analyzeWithout(t, rest, "5ms", openSteps)
	m, ok := res.Metrics["delay-cost-spread"]
	if !ok || len(m.All) != 3 || !strings.Contains(m.Note, "rest−grpc: 3 repetition(s) left out: a style lacks") || !strings.Contains(m.Note, "rest−amqp: 3 repetition(s) left out: a style lacks") {
		t.Fatalf("delay-cost-spread %+v (present %v), want the comparisons with rest left out in 3 repetitions", m, ok)
	}
	for _, p := range m.All {
		if measured := len(p.PerRun) > 0; measured != (p.Label == "grpc−amqp") {
			t.Errorf("%s measured %v", p.Label, p.PerRun)
		}
	}
	wantVerdict(t, res, "distance-costs-alike", claims.Inconclusive)
}

// A style whose fault step failed its noise audit in every repetition
// leaves losing nothing open, where the worst of the styles measured
// would have said it holds.
func TestLossWithAFailedAudit(t *testing.T) {
	res := analyzeWithout(t, grpc, "0ms", map[string]string{"kind": "fault", "fault": "kill-service"})
	wantVerdict(t, res, "kill-service-loses-nothing", claims.Inconclusive)
}

// analyzeWithout analyses the synthetic run with one style's steps at a
// delay failing their noise audit, as a report judges it.
func analyzeWithout(t *testing.T, style, delay string, where map[string]string) analysis.Result {
	t.Helper()
	ds := synthDataset(t)
	v, _ := ds.Variant(map[string]string{"style": style, "delay": delay})
	for _, st := range ds.Steps(where) {
		for _, u := range ds.Units(v.Key(), st.Name) {
			u.Audit = &results.Audit{OK: false}
		}
	}
	passed, left := ds.PassedAudits()
	if len(left) == 0 {
		t.Fatal("no unit left out")
	}
	res, err := ipc{}.Analyze(passed)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantVerdict judges claims.yaml's claim id on the result's metrics.
func wantVerdict(t *testing.T, res analysis.Result, id, want string) {
	t.Helper()
	file, err := claims.Load("../" + claims.FileName)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := file.Claim(id)
	if !ok {
		t.Fatalf("claims.yaml has no %s", id)
	}
	if got := claims.Judge(c, res.Metrics, nil); got.Verdict != want {
		t.Errorf("%s: verdict %q, want %q (%s)", id, got.Verdict, want, got.Why)
	}
}

// across combines the repetitions every style measured, and counts the
// ones some lacks and the ones f settles nothing of, so a note can say so.
func TestAcrossCountsWhatItLeavesOut(t *testing.T) {
	ratio := func(xs []float64) (float64, bool) { return xs[0] / xs[1], xs[1] != 0 }
	out, left := across(ratio, map[int]float64{1: 4, 2: 6, 3: 1, 4: 2}, map[int]float64{2: 3, 3: 0, 4: 1, 5: 7})
	if len(out) != 2 || out[2] != 2 || out[4] != 2 || left.unpaired != 2 || left.unsettled != 1 {
		t.Fatalf("across: %v, left out %+v; want 2 and 2 for repetitions 2 and 4, 2 unpaired (1, 5), 1 unsettled (3)", out, left)
	}
	if w := left.words(); !strings.Contains(w, "2 repetition(s) left out: a style lacks") || !strings.Contains(w, "1 repetition(s) left out: their bounds settle nothing") {
		t.Errorf("words %q", w)
	}
}
