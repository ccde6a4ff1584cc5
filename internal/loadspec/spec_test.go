package loadspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msbench/msbench/internal/load"
)

// Hostile bodies: whatever the file, the read ends at once, within the cap.
func TestReadBodyFileTakesOnlyBoundedRegularFiles(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	toZero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", toZero); err != nil {
		t.Fatal(err)
	}
	// Sparse: over the cap without taking the disk space.
	huge := sparse(t, dir, "huge", MaxBodySize+1)
	tests := []struct {
		name, path, want string
	}{
		{"regular file", small, ""},
		{"file at the cap", sparse(t, dir, "cap", MaxBodySize), ""},
		{"endless device", "/dev/zero", "a device, not a regular file"},
		{"symlink to a device", toZero, "a device, not a regular file"},
		{"fifo without a writer", fifo, "a named pipe, not a regular file"},
		{"directory", dir, "a directory, not a regular file"},
		{"over the cap", huge, "larger than the 64 MiB"},
		{"missing", filepath.Join(dir, "nothing"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := within(t, func() error { _, err := ReadBodyFile(tt.path); return err })
			checkErr(t, err, tt.want)
		})
	}
}

func TestMultipartBodyIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	half := sparse(t, dir, "half", MaxBodySize/2+1)
	tests := []struct {
		name   string
		fields []FormField
		want   string
	}{
		{"a file and a field", []FormField{{Name: "f", File: sparse(t, dir, "small", 10)}, {Name: "v", Value: "x"}}, ""},
		{"endless device", []FormField{{Name: "f", File: "/dev/zero"}}, "form field f: /dev/zero is a device"},
		{"fifo", []FormField{{Name: "f", File: fifo}}, "a named pipe"},
		{"one file over the cap", []FormField{{Name: "f", File: sparse(t, dir, "huge", MaxBodySize+1)}}, "larger than the 64 MiB"},
		{"two files over the cap together", []FormField{{Name: "a", File: half}, {Name: "b", File: half}}, "form field b: " + half + ": larger than the 64 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := within(t, func() error { _, _, err := MultipartBody(tt.fields); return err })
			checkErr(t, err, tt.want)
		})
	}
}

func sparse(t *testing.T, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// within fails the test rather than hang it when f blocks, as reading a
// FIFO did; a minute is far beyond what a refusal takes on a busy machine.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
		return nil
	}
}

// Shared limits of both front ends: users, timeouts and think times that
// would hold the machine or never end are refused.
func TestSpecRefusesUnboundedLoads(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"the most users", Spec{Users: MaxUsers, Requests: 10}, ""},
		{"a million users", Spec{Users: 1_000_000, Requests: 10}, "1000000 users: at most 100000"},
		{"a timeout of an hour", Spec{Timeout: time.Hour}, ""},
		{"a timeout over an hour", Spec{Timeout: 1000000 * time.Hour}, "a timeout of 1000000h0m0s: at most 1h0m0s"},
		{"think within a count's bound", Spec{Users: 1, Requests: 2, Think: load.Think{Min: time.Minute, Max: time.Minute}}, ""},
		{"think of a million hours", Spec{Users: 1, Requests: 2, Think: load.Think{Min: 1000000 * time.Hour, Max: 1000000 * time.Hour}}, "reaches the load's time bound, 1h0m0s"},
		{"think range reaching the duration", Spec{Duration: time.Second, Think: load.Think{Min: 0, Max: time.Second}}, "time bound, 1s"},
		{"think reaching the default duration", Spec{Think: load.Think{Min: DefaultDuration, Max: DefaultDuration}}, "time bound, 10s"},
		{"think with iterations", Spec{Iterations: 3, Think: load.Think{Min: 2 * time.Hour, Max: 2 * time.Hour}}, "time bound, 1h0m0s"},
		{"think within a long duration", Spec{Duration: 3 * time.Hour, Think: load.Think{Min: 2 * time.Hour, Max: 2 * time.Hour}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.spec.Config()
			checkErr(t, err, tt.want)
		})
	}
}

// A closed load bounded only by a count is bounded in time too.
func TestCountedLoadsHaveATimeBound(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want time.Duration
	}{
		{"no bound", Spec{}, DefaultDuration},
		{"requests", Spec{Requests: 10}, CountBound},
		{"iterations", Spec{Iterations: 10}, CountBound},
		{"requests and a duration", Spec{Requests: 10, Duration: 2 * time.Hour}, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.spec.Config()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Duration != tt.want {
				t.Fatalf("duration %v, want %v", cfg.Duration, tt.want)
			}
		})
	}
}

// checkErr fails unless err mentions want (no error when want is empty) on
// one line, as both front ends print it.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if (err == nil) != (want == "") || err != nil && (!strings.Contains(err.Error(), want) || strings.ContainsAny(err.Error(), "\r\n")) {
		t.Fatalf("error %v, want one line mentioning %q", err, want)
	}
}
