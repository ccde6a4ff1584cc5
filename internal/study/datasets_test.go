package study

import (
	"strings"
	"testing"
)

const withDataset = `study: t
builds:
  gen: {dir: ., command: "make-data {out}"}
datasets:
  places:
    file: sub/places.json
    otherwise: "{build.gen}/places.json"
services:
  api: {command: "x", env: {PLACES: "{dataset.places}"}, ready: {tcp: "{addr}"}}
load: {service: api, steps: [{name: s, requests: 1, targets: [{path: /}]}]}
`

func TestParseDatasets(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withDataset), "")
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Dataset("places"); d == nil || d.File != "sub/places.json" || d.Otherwise != "{build.gen}/places.json" {
		t.Fatalf("datasets %+v", s.Datasets)
	}
}

func TestDatasetErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"escapes the data directory", [2]string{"file: sub/places.json", "file: ../places.json"}, "t.yaml:6: datasets.places.file: a path inside the shared data directory"},
		{"absolute", [2]string{"file: sub/places.json", "file: /etc/passwd"}, "datasets.places.file: a path inside the shared data directory"},
		{"no stand-in", [2]string{"    otherwise: \"{build.gen}/places.json\"\n", ""}, "datasets.places: a dataset needs file"},
		{"stand-in of a service", [2]string{"{build.gen}/places.json", "{addr}/places.json"}, "t.yaml:7: datasets.places.otherwise: {addr}: a stand-in is found before anything starts"},
		{"unknown build", [2]string{"{build.gen}/places.json", "{build.nope}/places.json"}, "{build.nope}: no such build"},
		{"unknown dataset", [2]string{"{dataset.places}", "{dataset.cities}"}, "{dataset.cities}: want {dataset.NAME} of a declared dataset"},
		{"bad name", [2]string{"  places:\n", "  Places:\n"}, "datasets.Places: a dataset's name is lower-case"},
		{"unknown field", [2]string{"file: sub/places.json", "path: sub/places.json"}, "datasets.places.path: unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(withDataset, tc.replace[0]) {
				t.Fatalf("%q not in the study", tc.replace[0])
			}
			_, err := Parse("t.yaml", []byte(strings.Replace(withDataset, tc.replace[0], tc.replace[1], 1)), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
