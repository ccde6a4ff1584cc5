package runner

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/study"
)

// A step in one piece whose before requests fail is not measured, and
// leaves no records file, whole or partial, behind.
func TestStepNotReadyLeavesNoRecords(t *testing.T) {
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	s.Repetitions = 1
	s.Step("greet").Before = []*study.Target{{Service: "web", Method: "GET", Path: "/hello", ExpectStatus: "204"}}
	seed := uint64(3)
	var log bytes.Buffer
	dir, err := runAA(t, s, &seed, "", context.Background(), &log)
	if err == nil {
		t.Fatalf("run succeeded with every variant's hook failing:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "FAILED"); n != 3 {
		t.Errorf("%d variants failed, want 3:\n%s", n, log.String())
	}
	var left []string
	if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "records.parquet") {
			left = append(left, path)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("records left by steps never measured: %v", left)
	}
}

// A closed step in one piece warms up as a lead (see measurement.leadFor):
// the warm-up is kept apart, exactly as long as the step says, and the
// measured load after it is the step's whole count.
func TestStepInOnePieceWarmsUpAsALead(t *testing.T) {
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	s.Repetitions = 1
	s.Step("greet").Warmup = study.Warmup{Duration: 200 * time.Millisecond}
	r := runOnce(t, s, 3)
	prov, _ := r.ReadProvenance()
	for _, key := range prov.Order[0] {
		d := r.StepDir(1, key, "greet")
		warm, err := d.ReadWarmup()
		if err != nil || warm == nil || warm.Requests < 2 || warm.DurationS != 0.2 {
			t.Fatalf("%s: warm-up %+v %v, want 200 ms with each user's first request", key, warm, err)
		}
		sum, err := d.ReadSummary()
		if err != nil || sum.Requests != 20 || !sum.StartedAt.Equal(warm.EndedAt) {
			t.Fatalf("%s: summary %+v %v, want 20 requests from the warm-up's end %v", key, sum, err, warm.EndedAt)
		}
		if sl, err := d.ReadSlices(); err != nil || sl != nil {
			t.Fatalf("%s: slices %+v %v of a step in one piece", key, sl, err)
		}
	}
}
