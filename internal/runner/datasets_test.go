package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func TestResolveDatasets(t *testing.T) {
	s := &study.Study{Datasets: []study.Dataset{{Name: "places", File: "places.json", Otherwise: "{build.gen}/places.json"}}}
	write := func(dir, content string) {
		if err := os.WriteFile(filepath.Join(dir, "places.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
		{"shared is a directory", "dir", `["stand-in"]`, "", "", "places.json: is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, build := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "build")
			for _, d := range []string{data, build} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			switch tc.shared {
			case "":
			case "dir":
				if err := os.Mkdir(filepath.Join(data, "places.json"), 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				write(data, tc.shared)
			}
			if tc.stand != "" {
				write(build, tc.stand)
			}
			values := map[string]string{"build.gen": build}
			used, err := resolveDatasets(s, data, values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
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
