package study

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/load"
)

const valid = `study: demo
builds:
  app: {dir: services/demo, command: "go build -o {out}/ ./..."}
dependencies:
  pg: {kind: postgres}
services:
  db:
    command: "sleep 100"
    ready: {tcp: "{addr}"}
  api:
    build: app
    command: "{build.app}/api-{lang}"
    env: {ADDR: "{addr}", DB: "{service.db.addr}", MODE: "{mode}", PG: "{dep.pg.url}"}
    after: [db]
    replicas: 2
    limits: {cpus: 1.5, memory: 256MiB}
    ready: {http: "http://{addr}/healthz", timeout: 10s}
variants:
  lang: [go, java]
  mode: [a, b, c]
load:
  service: api
  steps:
    - name: warm
      users: 10
      think: 500ms-1s
      iterations: 10
      targets: [{path: /, expect_status: "200"}]
    - name: rate
      model: open
      rate: 50.5
      duration: 1m
      warmup: {duration: 5s}
      targets:
        - {path: /a, weight: 3}
        - {name: upload, method: post, path: /b, form: {image: "@x.png"}}
repetitions: 3
profiles:
  quick:
    repetitions: 1
    variants: {mode: [a]}
    steps:
      rate: {duration: 5s, rate: 10}
  paper: {}
`

func TestParseValid(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(valid), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || s.Repetitions != 3 || len(s.Matrix()) != 6 {
		t.Fatalf("study %q reps %d variants %d", s.Name, s.Repetitions, len(s.Matrix()))
	}
	api := s.Service("api")
	if api.Replicas != 2 || api.Limits.CPUs != 1.5 || api.Limits.MemoryBytes != 256<<20 || api.Ready.Timeout != 10*time.Second {
		t.Fatalf("api %+v", api)
	}
	if order := s.StartOrder(); order[0].Name != "db" || order[1].Name != "api" {
		t.Fatalf("start order %s, %s", order[0].Name, order[1].Name)
	}
	warm, rate := s.Load.Steps[0], s.Load.Steps[1]
	if warm.Load.Think != (load.Think{Min: 500 * time.Millisecond, Max: time.Second}) || warm.Load.Open {
		t.Fatalf("warm step %+v", warm)
	}
	if rate.Load.Rate != 50.5 || rate.Targets[1].Method != "POST" || rate.Targets[0].Weight != 3 || rate.Warmup.Duration != 5*time.Second {
		t.Fatalf("rate step %+v", rate)
	}
	if got := s.Matrix()[1].Key(); got != "go-b" {
		t.Fatalf("second variant %q, want go-b", got)
	}
}

func TestProfileOverlay(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(valid), "quick")
	if err != nil {
		t.Fatal(err)
	}
	rate := s.Load.Steps[1]
	if s.Repetitions != 1 || len(s.Matrix()) != 2 || rate.Load.Duration != 5*time.Second || rate.Load.Rate != 10 || len(rate.Targets) != 2 {
		t.Fatalf("reps %d variants %d step %+v", s.Repetitions, len(s.Matrix()), rate)
	}
	if _, err := Parse("demo.yaml", []byte(valid), "nope"); err == nil || !strings.Contains(err.Error(), `no profile "nope" (profiles: quick, paper)`) {
		t.Fatalf("unknown profile: %v", err)
	}
}

func TestErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to valid
		want    string
	}{
		{"unknown field", [2]string{"replicas: 2", "replica: 2"}, "demo.yaml:15: services.api.replica: unknown field"},
		{"bad number", [2]string{"users: 10", "users: many"}, `demo.yaml:25: load.steps[0].users: want a whole number, got "many"`},
		{"zero users", [2]string{"users: 10", "users: 0"}, "demo.yaml:25: load.steps[0].users: want at least 1"},
		{"bad duration", [2]string{"duration: 1m", "duration: forever"}, `demo.yaml:32: load.steps[1].duration: want a duration`},
		{"bad memory", [2]string{"memory: 256MiB", "memory: lots"}, "demo.yaml:16: services.api.limits.memory: want a size"},
		{"bad model", [2]string{"model: open", "model: half-open"}, `demo.yaml:30: load.steps[1].model: "half-open" is not one of closed, open`},
		{"unknown build", [2]string{"build: app", "build: ap"}, `services.api.build: no build named "ap"`},
		{"unknown after", [2]string{"after: [db]", "after: [dbx]"}, `services.api.after: no other service named "dbx"`},
		{"unknown placeholder", [2]string{"{service.db.addr}", "{service.dbx.addr}"}, "demo.yaml:13: services.api.env.DB: {service.dbx.addr}"},
		{"unknown axis", [2]string{"api-{lang}", "api-{language}"}, "demo.yaml:12: services.api.command: {language}: unknown placeholder"},
		{"out outside build", [2]string{`ADDR: "{addr}"`, `ADDR: "{out}"`}, "{out} exists only in build commands"},
		{"no ready", [2]string{"ready: {tcp: \"{addr}\"}", "ready: {}"}, "services.db.ready: give exactly one of http or tcp"},
		{"open with users", [2]string{"rate: 50.5", "rate: 50.5\n      users: 3"}, "demo.yaml:29: load.steps[1]: users belong to the closed model"},
		{"tick without coarse pacing", [2]string{"rate: 50.5", "rate: 50.5\n      tick: 1ms"}, "load.steps[1]: a tick applies to coarse pacing only"},
		{"rate in the closed model", [2]string{"iterations: 10", "rate: 10"}, "load.steps[0]: a rate or stages belong to the open model"},
		{"zero rate", [2]string{"rate: 50.5", "rate: 0"}, "load.steps[1]: a rate of 0 sends nothing"},
		{"bad think", [2]string{"think: 500ms-1s", "think: 1s-500ms"}, `demo.yaml:26: load.steps[0].think: think time "1s-500ms": want a range`},
		{"bad stages", [2]string{"duration: 1m", "stages: 10s"}, `load.steps[1].stages: stage "10s": want DURATION:RATE`},
		{"bad arrivals", [2]string{"rate: 50.5", "rate: 50.5\n      arrivals: bursty"}, `load.steps[1].arrivals: arrivals "bursty": want uniform or poisson`},
		{"bad min success", [2]string{"rate: 50.5", "rate: 50.5\n      min_success: 2"}, "load.steps[1]: the minimum success rate 2 must lie between 0 and 1"},
		{"path without slash", [2]string{"path: /a,", "path: a,"}, "a path starts with /"},
		{"profile unknown step", [2]string{"rate: {duration: 5s", "rat: {duration: 5s"}, "profiles.quick.steps.rat: no step of that name"},
		{"profile unknown value", [2]string{"mode: [a]", "mode: [z]"}, `profiles.quick.variants.mode: "z" is not a value of axis mode`},
		{"syntax", [2]string{"lang: [go, java]", "lang: [go, java"}, "demo.yaml:"},
		{"cycle", [2]string{"ready: {tcp: \"{addr}\"}", "ready: {tcp: \"{addr}\"}\n    after: [api]"}, "start order has a cycle"},
		{"unknown dependency kind", [2]string{"kind: postgres", "kind: oracle"}, "demo.yaml:5: dependencies.pg.kind: unknown"},
		{"unknown dependency key", [2]string{"{dep.pg.url}", "{dep.pg.uri}"}, "{dep.pg.uri}: want {dep.NAME.KEY}"},
		{"duplicate key", [2]string{"repetitions: 3", "repetitions: 3\nrepetitions: 4"}, "repetitions: given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := parseEdited(t, valid, tt.replace)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tt.want)
			}
			var fe *FieldError
			if tt.name != "cycle" && !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FieldError", err)
			}
		})
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	text := strings.NewReplacer("users: 10", "users: x", "rate: 50.5", "rate: y").Replace(valid)
	_, err := Parse("demo.yaml", []byte(text), "")
	if err == nil || !strings.Contains(err.Error(), "users") || !strings.Contains(err.Error(), "rate") {
		t.Fatalf("want both mistakes reported, got %v", err)
	}
}

func TestShippedStudiesAreValid(t *testing.T) {
	files, err := filepath.Glob("../../studies/*/" + FileName)
	if err != nil || len(files) == 0 {
		t.Fatalf("no study files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(f, data, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Profiles {
			if _, err := Parse(f, data, p); err != nil {
				t.Errorf("profile %s: %v", p, err)
			}
		}
	}
}

func TestAATwin(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(valid), "")
	if err != nil {
		t.Fatal(err)
	}
	// Default: the first variant of the matrix.
	if s.AA != "go-a" {
		t.Fatalf("default aa %q, want go-a", s.AA)
	}
	twin, ok := s.Twin()
	if !ok || !twin.Twin || twin.Key() != "go-a@aa" || twin.Get("lang") != "go" || twin.Get("mode") != "a" {
		t.Fatalf("twin %+v %v, key %q", twin, ok, twin.Key())
	}
	base := s.Matrix()[0]
	if !maps.Equal(s.Placeholders(twin), s.Placeholders(base)) || len(s.Placeholders(twin)) == 0 {
		t.Fatalf("twin placeholders %v, base %v", s.Placeholders(twin), s.Placeholders(base))
	}
	runs := s.Runs()
	if len(s.Matrix()) != 6 || len(runs) != 7 || runs[6].Key() != "go-a@aa" {
		t.Fatalf("matrix %d, runs %d", len(s.Matrix()), len(runs))
	}

	s, err = Parse("demo.yaml", []byte(strings.Replace(valid, "repetitions: 3\n", "repetitions: 3\naa: java-a\n", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	if twin, ok := s.Twin(); !ok || twin.Key() != "java-a@aa" {
		t.Fatalf("aa: java-a gave %q %v", twin.Key(), ok)
	}

	s, err = Parse("demo.yaml", []byte(strings.Replace(valid, "repetitions: 3\n", "repetitions: 3\naa: none\n", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Twin(); ok || s.AA != "" || len(s.Runs()) != len(s.Matrix()) {
		t.Fatalf("aa: none left a twin %q", s.AA)
	}

	// A study without axes has one variant, "default".
	in := &Study{AA: "default"}
	if twin, ok := in.Twin(); !ok || twin.Key() != "default@aa" || len(in.Runs()) != 2 {
		t.Fatalf("twin of the default variant %q %v", twin.Key(), ok)
	}
	// An in-memory study (or a run made before A/A twins) has none.
	if _, ok := (&Study{}).Twin(); ok {
		t.Fatal("a study without AA has a twin")
	}
}

func TestAAProfileOverride(t *testing.T) {
	text := strings.Replace(valid, "    variants: {mode: [a]}\n", "    variants: {mode: [a]}\n    aa: java-a\n", 1)
	text = strings.Replace(text, "  paper: {}\n", "  paper: {aa: none}\n", 1)
	text = strings.Replace(text, "repetitions: 3\n", "repetitions: 3\naa: go-c\n", 1)
	for profile, want := range map[string]string{"": "go-c", "quick": "java-a", "paper": ""} {
		s, err := Parse("demo.yaml", []byte(text), profile)
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		if s.AA != want {
			t.Fatalf("profile %q: aa %q, want %q", profile, s.AA, want)
		}
	}
	// Without a profile's aa, the default follows the profile's subset.
	s, err := Parse("demo.yaml", []byte(valid), "quick")
	if err != nil {
		t.Fatal(err)
	}
	if s.AA != "go-a" || len(s.Runs()) != 3 {
		t.Fatalf("quick: aa %q, %d runs", s.AA, len(s.Runs()))
	}
}

func TestAAErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to valid
		want    string
	}{
		{"unknown key", [2]string{"repetitions: 3\n", "repetitions: 3\naa: rust-a\n"},
			`demo.yaml:38: aa: "rust-a" is not a variant key of the matrix (known: go-a, go-b, go-c, java-a, java-b, java-c, or none)`},
		{"axis value, not key", [2]string{"repetitions: 3\n", "repetitions: 3\naa: go\n"}, `demo.yaml:38: aa: "go" is not a variant key`},
		{"empty", [2]string{"repetitions: 3\n", "repetitions: 3\naa:\n"}, "demo.yaml:38: aa: want a string, got nothing"},
		{"list", [2]string{"repetitions: 3\n", "repetitions: 3\naa: [go-a]\n"}, "demo.yaml:38: aa: want a string, got a list"},
		{"outside the profile's variants", [2]string{"repetitions: 3\n", "repetitions: 3\naa: go-b\n"},
			`demo.yaml:38: aa: "go-b" is not a variant key of profile quick (give profiles.quick.aa) (known: go-a, java-a, or none)`},
		{"profile unknown key", [2]string{"    variants: {mode: [a]}\n", "    variants: {mode: [a]}\n    aa: go-b\n"},
			`demo.yaml:42: profiles.quick.aa: "go-b" is not a variant key of profile quick (known: go-a, java-a, or none)`},
		{"at in a value", [2]string{"mode: [a, b, c]", "mode: [a, b@aa, c]"}, `variants.mode[1]: "b@aa": a value names directories`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, valid, tt.replace, tt.want) })
	}
}

// parseEdited parses base with one replacement made, failing the test when
// the text to replace is not there (the case would test nothing).
func parseEdited(t *testing.T, base string, replace [2]string) error {
	t.Helper()
	text := strings.Replace(base, replace[0], replace[1], 1)
	if text == base {
		t.Fatalf("replacement %q not found", replace[0])
	}
	_, err := Parse("demo.yaml", []byte(text), "")
	return err
}

// wantFieldError checks that the edited study fails with a FieldError
// saying want.
func wantFieldError(t *testing.T, base string, replace [2]string, want string) {
	t.Helper()
	err := parseEdited(t, base, replace)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant it to contain %q", err, want)
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a FieldError", err)
	}
}

// A block shared through a YAML anchor reads as the block itself.
func TestAliases(t *testing.T) {
	s, err := Parse("a.yaml", []byte(`study: a
services:
  one: {command: "x", env: &common {A: "1", B: "{addr}"}, ready: {tcp: "{addr}"}}
  two: {command: "y", env: *common, ready: {tcp: "{addr}"}}
load: {service: one, steps: [{name: s, requests: 1, targets: &t [{path: /}]}, {name: u, requests: 1, targets: *t}]}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	if env := s.Service("two").Env; len(env) != 2 || env[1] != [2]string{"B", "{addr}"} {
		t.Fatalf("two's env %v", env)
	}
	if len(s.Load.Steps[1].Targets) != 1 || s.Load.Steps[1].Targets[0].Path != "/" {
		t.Fatalf("u's targets %+v", s.Load.Steps[1].Targets)
	}
}
