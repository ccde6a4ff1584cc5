package runner

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func TestResolveDatasets(t *testing.T) {
	s := &study.Study{Datasets: []study.Dataset{{Name: "places", File: "places.json", Otherwise: "{build.gen}/places.json"}}}
	tests := []struct {
		name           string
		shared, stand  string // the files' contents, "" for none
		source, inPath string
		wantErr        string
	}{
		{"shared wins", `["shared"]`, `["stand-in"]`, results.DatasetShared, "data", ""},
		{"stand-in when the shared file is absent", "", `["stand-in"]`, results.DatasetGenerated, "build", ""},
		{"neither", "", "", "", "", "places.json is absent, and its stand-in"},
		// A shared file that is there but unreadable is no reason to
		// measure the stand-in instead.
		{"shared is a directory", "dir", `["stand-in"]`, "", "", "places.json is not a regular file"},
		// Reading these blocked, or never ended.
		{"shared is a FIFO", "fifo", `["stand-in"]`, "", "", "places.json is not a regular file"},
		{"shared is a symlink to /dev/zero", "zero", `["stand-in"]`, "", "", "places.json is not a regular file"},
		{"shared is over the cap", "huge", `["stand-in"]`, "", "", "places.json is over 1024 MiB"},
		{"stand-in is a FIFO", "", "fifo", "", "", "places.json is absent, and its stand-in: " + "BUILD/places.json is not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, build := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "build")
			for _, d := range []string{data, build} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for dir, content := range map[string]string{data: tc.shared, build: tc.stand} {
				place(t, filepath.Join(dir, "places.json"), content)
			}
			values := map[string]string{"build.gen": build}
			done := make(chan error, 1)
			var used map[string]results.DatasetFile
			go func() {
				var err error
				used, err = resolveDatasets(s, data, values)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("resolving the datasets does not end")
			}
			if tc.wantErr != "" {
				if want := strings.ReplaceAll(tc.wantErr, "BUILD", build); err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := used["places"]
			want := map[string]string{"data": data, "build": build}[tc.inPath]
			if f.Source != tc.source || filepath.Dir(f.Path) != want || values["dataset.places"] != f.Path || f.Bytes == 0 || len(f.SHA256) != 64 {
				t.Fatalf("resolved %+v, values %v", f, values)
			}
		})
	}
}

// place makes path what the case says: nothing (""), a directory, a FIFO,
// a symlink to /dev/zero, a sparse file over the cap, or a file of that
// content.
func place(t *testing.T, path, what string) {
	t.Helper()
	var err error
	switch what {
	case "":
	case "dir":
		err = os.Mkdir(path, 0o755)
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "zero":
		err = os.Symlink("/dev/zero", path)
	case "huge":
		if err = os.WriteFile(path, nil, 0o644); err == nil {
			err = os.Truncate(path, maxDatasetBytes+1)
		}
	default:
		err = os.WriteFile(path, []byte(what), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
