package apitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	standin "github.com/msbench/msbench/studies/frameworks/dataset"
)

// finnish is how many Finnish universities the dataset holds.
const finnish = standin.Finnish

// dataset is the universities list the services are given, as bytes and
// as decoded records, which the answers are compared with.
type dataset struct {
	raw     []byte
	records []map[string]any
}

// loadDataset reads the study's dataset at path ({dataset.universities}:
// the shared file or, where it is absent, the study's generated stand-in),
// 33 Finnish universities among others.
func loadDataset(t *testing.T, path string) dataset {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the study's dataset: %v", err)
	}
	d := dataset{raw: raw}
	if err := json.Unmarshal(raw, &d.records); err != nil {
		t.Fatalf("dataset %s: %v", path, err)
	}
	if n := len(d.country("Finland")); n != finnish {
		t.Fatalf("the dataset %s has %d Finnish universities, want %d", path, n, finnish)
	}
	return d
}

// country is the records of the country, in the dataset's order.
func (d dataset) country(name string) []map[string]any {
	var found []map[string]any
	for _, r := range d.records {
		if r["country"] == name {
			found = append(found, r)
		}
	}
	return found
}

// copyTo writes the dataset into a file of the test's own, which the test
// may change behind the service's back.
func (d dataset) copyTo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "universities.json")
	if err := os.WriteFile(path, d.raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// replace swaps the file at path for one holding records, at once: a
// service reading it meanwhile sees the old file or the new, whole.
func replace(t *testing.T, path string, records []map[string]any) {
	t.Helper()
	raw, err := json.Marshal(records)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
