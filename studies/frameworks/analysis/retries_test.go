package frameworks

import (
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/analysis"
)

// Micro's requests past one RPC attempt, repetition by repetition: one
// repetition under the edge (every answer within 5 s, one exactly at it),
// one fallen into retries (answers after 12 s, and some never); Nest
// beside them and Micro's Hello World, which the table leaves out.
func TestRetriesPerRepetition(t *testing.T) {
	var under, fallen []answer
	for i := range 100 {
		under = append(under, answer{4000, 200})
		switch {
		case i < 60:
			fallen = append(fallen, answer{12_000, 200})
		case i < 70:
			fallen = append(fallen, answer{6000, 408})
		default:
			fallen = append(fallen, answer{30_000, 0})
		}
	}
	under[0] = answer{microAttemptMs, 200} // exactly the time-out is within one attempt

	st := loadStudy(t, "", 2)
	step, helloHigh := st.Load.Steps[3], st.Load.Steps[1] // universities-high, hello-high
	ds0 := analysis.NewDataset(st, nil)
	microV, _ := ds0.Variant(map[string]string{"framework": micro, "load": perRequest})
	nestV, _ := ds0.Variant(map[string]string{"framework": nest, "load": atStart})
	ds := analysis.NewDataset(st, []*analysis.Unit{
		unit(t, microV, step.Name, 1, under, synthResources(st, microV, step)),
		unit(t, microV, step.Name, 2, fallen, synthResources(st, microV, step)),
		unit(t, nestV, step.Name, 1, fallen, synthResources(st, nestV, step)),
		unit(t, microV, helloHigh.Name, 1, fallen, synthResources(st, microV, helloHigh)),
	})
	res, err := frameworksAnalysis{}.Analyze(ds)
	if err != nil {
		t.Fatal(err)
	}
	tb := section(t, res, "Micro's RPC time-out").Tables[0]
	for _, tc := range []struct {
		rep  string
		want []string // requests, past one attempt %, 200 %
	}{
		{"1", []string{"100", "0.0", "100.0"}},
		{"2", []string{"100", "100.0", "60.0"}},
	} {
		var got []string
		for _, r := range tb.Rows {
			if r[0] == "micro-per-request" && r[2] == tc.rep {
				got = r
			}
		}
		if got == nil || strings.Join(got[3:6], "|") != strings.Join(tc.want, "|") {
			t.Errorf("repetition %s: row %v, want %v", tc.rep, got, tc.want)
		}
	}
	for _, r := range tb.Rows {
		if !strings.HasPrefix(r[0], micro+"-") {
			t.Errorf("row %v: only Micro is shown", r)
		}
	}
	if len(tb.Rows) != 2 {
		t.Errorf("%d rows, want Micro's two repetitions: %v", len(tb.Rows), tb.Rows)
	}
}
