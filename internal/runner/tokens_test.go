package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/results"
)

// The service is given the run's secret and the load the run's token: the
// token opens, its absence does not, and neither is in the run's files.
func TestTokens(t *testing.T) {
	dir, log, err := runStudy(t, "testdata/tokens.yaml", "", context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	r, _ := results.Open(dir)
	for step, want := range map[string]string{"with-token": "200", "without": "401"} {
		s, err := r.StepDir(1, "default", step).ReadSummary()
		if err != nil {
			t.Fatal(err)
		}
		if s.Successes != 20 || s.StatusCodes[want] != 20 {
			t.Errorf("%s: %d ok, statuses %v, want 20 × %s", step, s.Successes, s.StatusCodes, want)
		}
	}
	// A token is three base64url parts; none may be left in the run's
	// files (the service's log aside, which is its own).
	filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.Contains(path, "/logs/") {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "eyJhbGciOiJIUzI1NiIs") {
			t.Errorf("%s holds a token", path)
		}
		return nil
	})
}
