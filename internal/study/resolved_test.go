package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The testdata/resolved-unversioned files are the shipped studies' quick
// profiles as study.resolved.json, written by the msbench before formats
// were numbered. A report of such a run must read every field of them:
// what this msbench reads and writes back is what they hold.
func TestReadsResolvedStudiesOfOlderRuns(t *testing.T) {
	files, err := filepath.Glob("testdata/resolved-unversioned/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no old study.resolved.json files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			old, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var s Study
			if err := json.Unmarshal(old, &s); err != nil {
				t.Fatal(err)
			}
			if s.Name == "" || len(s.Services) == 0 || len(s.Load.Steps) == 0 || s.Services[0].Command == "" {
				t.Fatalf("read %+v", s)
			}
			again, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var was, is map[string]any
			if err := json.Unmarshal(old, &was); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &is); err != nil {
				t.Fatal(err)
			}
			if is["Format"] != float64(FormatVersion) {
				t.Errorf("written with format %v, want %d", is["Format"], FormatVersion)
			}
			delete(is, "Format")
			if !reflect.DeepEqual(was, is) {
				for k := range was {
					if !reflect.DeepEqual(was[k], is[k]) {
						t.Errorf("%s: was %v\nnow %v", k, was[k], is[k])
					}
				}
				t.Fatal("read and written again, the study differs")
			}
		})
	}
}

// A study written by a newer msbench is refused with what this one
// cannot read, not read with fields silently empty.
func TestRefusesResolvedStudiesOfNewerFormats(t *testing.T) {
	written, err := json.Marshal(Study{Name: "x", Repetitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(written, &fields); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		edit  func(map[string]any)
		want  string
		reads bool
	}{
		{"this format", func(map[string]any) {}, "", true},
		{"no format (older runs)", func(m map[string]any) { delete(m, "Format") }, "", true},
		{"newer with new fields", func(m map[string]any) {
			m["Format"] = FormatVersion + 1
			m["Deployments"] = []string{"a"}
			m["Load"] = map[string]any{"Service": "api", "Steps": []any{map[string]any{"Name": "s", "Shape": "spike", "Load": map[string]any{"Users": 1, "Burst": 2}}}}
			m["Placement"] = map[string]any{"Services": map[string]any{"api": "1"}, "Cluster": "k8s"}
		},
			"study in format 2, written by a newer msbench: this one reads formats up to 1, and does not know Deployments, Load.Steps[0].Load.Burst, Load.Steps[0].Shape, Placement.Cluster", false},
		{"newer, same fields", func(m map[string]any) { m["Format"] = FormatVersion + 1 },
			"study in format 2, written by a newer msbench: this one reads formats up to 1; it knows every field", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]any{}
			for k, v := range fields {
				m[k] = v
			}
			tt.edit(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var s Study
			err = json.Unmarshal(data, &s)
			if tt.reads {
				if err != nil || s.Name != "x" {
					t.Fatalf("read %q, %v", s.Name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
