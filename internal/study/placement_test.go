package study

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

const placed = valid + `placement:
  generator: "0"
  services: {api: "1-2", db: "0,2"}
  dependencies:
    pg: all
`

func TestPlacementParses(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(placed), "quick")
	if err != nil {
		t.Fatal(err)
	}
	p := s.Placement
	if p == nil || p.None || p.Generator != "0" || !maps.Equal(p.Services, map[string]string{"api": "1-2", "db": "0,2"}) || p.Dependencies["pg"] != PlacementAll {
		t.Fatalf("placement %+v", p)
	}
	// study.resolved.json keeps it as asked.
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"Placement":{"Generator":"0","Services":{"api":"1-2","db":"0,2"},"Dependencies":{"pg":"all"}}`) {
		t.Fatalf("%s %v", b, err)
	}
	var back Study
	if err := json.Unmarshal(b, &back); err != nil || back.Placement.Services["db"] != "0,2" {
		t.Fatalf("%+v %v", back.Placement, err)
	}
	if s, err := Parse("demo.yaml", []byte(valid), ""); err != nil || s.Placement != nil {
		t.Fatalf("no placement: %+v %v", s.Placement, err)
	}
	s, err = Parse("demo.yaml", []byte(valid+"placement: none\n"), "")
	if err != nil || !s.Placement.None {
		t.Fatalf("placement: none: %+v %v", s.Placement, err)
	}
	// Cores a machine may lack are no error here: study files travel.
	if _, err := Parse("demo.yaml", []byte(strings.Replace(placed, `generator: "0"`, `generator: "63"`, 1)), ""); err != nil {
		t.Fatal(err)
	}
}

func TestPlacementErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to placed
		want    string
	}{
		{"bad list", [2]string{`generator: "0"`, `generator: "zero"`}, `demo.yaml:46: placement.generator: core list "zero": "zero" is not a core number`},
		{"backwards range", [2]string{`api: "1-2"`, `api: "2-1"`}, `demo.yaml:47: placement.services.api: core list "2-1": range 2-1 runs backwards`},
		{"unknown service", [2]string{`api: "1-2"`, `apx: "1-2"`}, `demo.yaml:47: placement.services.apx: no service named "apx"`},
		{"unknown dependency", [2]string{"pg: all", "pgx: all"}, `demo.yaml:49: placement.dependencies.pgx: no dependency named "pgx"`},
		{"unknown field", [2]string{`generator: "0"`, `loadgen: "0"`}, "demo.yaml:46: placement.loadgen: unknown field (known: generator, services, dependencies)"},
		{"empty", [2]string{"pg: all", `pg: ""`}, "demo.yaml:49: placement.dependencies.pg: must not be empty"},
		{"not a mapping", [2]string{"placement:\n  generator: \"0\"\n  services: {api: \"1-2\", db: \"0,2\"}\n  dependencies:\n    pg: all\n", "placement: some\n"}, `demo.yaml:45: placement: want a mapping of generator, services and dependencies, or none, got "some"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, placed, tt.replace, tt.want) })
	}
}
