package runner

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

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
