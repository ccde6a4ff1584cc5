package study

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// only: keeps a diagonal of two axes, which no subset of each axis'
// values makes; the A/A twin and the baseline follow it.
func TestProfileOnly(t *testing.T) {
	text := strings.Replace(valid, "    variants: {mode: [a]}\n", "    only: [java-c, go-a]\n", 1)
	s, err := Parse("demo.yaml", []byte(text), "quick")
	if err != nil {
		t.Fatal(err)
	}
	// In the matrix' order, whatever the order of only:.
	if got := keysOf(s.Matrix()); got != "go-a java-c" {
		t.Fatalf("matrix %s, want go-a java-c", got)
	}
	if s.AA != "go-a" || s.BaselineKey() != "go-a" || keysOf(s.Runs()) != "go-a java-c go-a@aa" {
		t.Fatalf("aa %q, baseline %q, runs %s", s.AA, s.BaselineKey(), keysOf(s.Runs()))
	}
	if full, err := Parse("demo.yaml", []byte(text), ""); err != nil || len(full.Matrix()) != 6 {
		t.Fatalf("without the profile: %v, %d variants", err, len(full.Matrix()))
	}
}

func TestProfileOnlyErrors(t *testing.T) {
	tests := []struct {
		name, only, want string
	}{
		{"unknown key", "[go-a, rust-a]", `demo.yaml:42: profiles.quick.only[1]: "rust-a" is not the key of a variant the profile keeps (known: go-a, java-a)`},
		{"left out by variants:", "[go-b]", `profiles.quick.only[0]: "go-b" is not the key of a variant the profile keeps`},
		{"twice", "[go-a, go-a]", `profiles.quick.only[1]: "go-a" is named twice`},
		{"empty", "[]", "profiles.quick.only: keeps no variant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(valid, "    variants: {mode: [a]}\n", "    variants: {mode: [a]}\n    only: "+tt.only+"\n", 1)
			_, err := Parse("demo.yaml", []byte(text), "quick")
			var fe *FieldError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &fe) {
				t.Fatalf("error %v\nwant a FieldError containing %q", err, tt.want)
			}
		})
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
		// MariaDB offers a dsn, Postgres does not: caught before anything starts.
		{"key of another kind", [2]string{"{dep.pg.url}", "{dep.pg.dsn}"}, "{dep.pg.dsn}: want {dep.NAME.KEY} of a declared dependency, KEY one its kind offers (mariadb: addr, database, dsn,"},
		{"duplicate key", [2]string{"repetitions: 3", "repetitions: 3\nrepetitions: 4"}, "repetitions: given twice"},
		{"two actions in an event", [2]string{"iterations: 10", "iterations: 10\n      events: [{at: 1s, kill: db, restart: db}]"}, "demo.yaml:28: load.steps[0].events[0].restart: one action per event"},
		{"event without at", [2]string{"iterations: 10", "iterations: 10\n      events: [{kill: db}]"}, "demo.yaml:28: load.steps[0].events[0]: an event needs at and one of request, kill, restart, pause, resume, link"},
		{"bad expect status", [2]string{`expect_status: "200"`, `expect_status: "2000"`}, `demo.yaml:28: load.steps[0].targets[0].expect_status: expected status "2000"`},
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

	if s.BaselineKey() != s.Matrix()[0].Key() {
		t.Errorf("baseline %q without baseline:, want the first variant %s", s.BaselineKey(), s.Matrix()[0].Key())
	}
	s, err = Parse("demo.yaml", []byte(strings.Replace(valid, "repetitions: 3\n", "repetitions: 3\nbaseline: java-a\n", 1)), "")
	if err != nil || s.BaselineKey() != "java-a" || s.AA != s.Matrix()[0].Key() {
		t.Fatalf("baseline: java-a gave %q, aa %q, %v", s.BaselineKey(), s.AA, err)
	}
	for _, bad := range []string{"nope", "none"} {
		_, err = Parse("demo.yaml", []byte(strings.Replace(valid, "repetitions: 3\n", "repetitions: 3\nbaseline: "+bad+"\n", 1)), "")
		if err == nil || !strings.Contains(err.Error(), `demo.yaml:`) || !strings.Contains(err.Error(), `baseline: "`+bad+`" is not a variant key of the matrix`) {
			t.Errorf("baseline: %s gave %v", bad, err)
		}
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

// Every name that becomes a file or directory of a run is checked as the
// file is read, also once each: has filled a step's name in: a name that
// climbs out of the run directory, or carries markup, is a mistake of the
// study file, not a failure of every variant.
func TestNamesThatBecomePaths(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string // applied to valid
		want    string
	}{
		{"step", [2]string{"name: warm", `name: "../../../../../../victim"`}, `demo.yaml:24: load.steps[0].name: "../../../../../../victim": a step's name becomes a file name`},
		{"step from each", [2]string{"- name: warm", "- name: \"w-{x}\"\n      each: {x: [ok, \"../../v\"]}"}, `demo.yaml:24: load.steps[0].name: "w-../../v": a step's name`},
		{"step renamed by a profile", [2]string{"rate: {duration: 5s, rate: 10}", "rate: {duration: 5s, rate: 10, name: /etc}"}, `demo.yaml:43: profiles.quick.steps.rate.name: "/etc": a step's name`},
		{"step too long", [2]string{"name: warm", "name: " + strings.Repeat("w", 65)}, "demo.yaml:24: load.steps[0].name:"},
		{"step with ..", [2]string{"name: warm", "name: a..b"}, `demo.yaml:24: load.steps[0].name: "a..b"`},
		{"service with markup", [2]string{"  db:\n", "  \"<script>alert(1)</script>\":\n"}, `demo.yaml:7: services.<script>alert(1)</script>: "<script>alert(1)</script>": a service's name becomes a file name`},
		{"dependency", [2]string{"  pg: {kind: postgres}", "  ../pg: {kind: postgres}"}, `demo.yaml:5: dependencies.../pg: "../pg": a dependency's name`},
		{"build", [2]string{"  app: {dir", "  a/pp: {dir"}, `demo.yaml:3: builds.a/pp: "a/pp": a build's name`},
		{"axis value", [2]string{"mode: [a, b, c]", "mode: [a, .., c]"}, `demo.yaml:20: variants.mode[1]: "..": a value names directories`},
		{"study", [2]string{"study: demo", "study: ../../demo"}, `demo.yaml:1: study: "../../demo": a study's name names its run directories`},
		{"profile", [2]string{"  paper: {}", "  ../paper: {}"}, `demo.yaml:44: profiles.../paper: "../paper": a profile's name`},
		{"axis value with attributes", [2]string{"  lang: [go, java]", "  lang:\n    go: {x: \"1\"}\n    ../java: {x: \"2\"}"}, `demo.yaml:21: variants.lang.../java: "../java": a value names directories`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, valid, tt.replace, tt.want) })
	}
	if _, err := Parse("demo.yaml", []byte(strings.Replace(valid, "name: warm", "name: Warm_1.x-2", 1)), ""); err != nil {
		t.Fatalf("a name of letters, digits, '.', '_' and '-' refused: %v", err)
	}
}

// A YAML alias repeats its anchor's block; aliases of blocks of aliases
// multiply. A file that would expand to billions of nodes is refused at
// once, at the alias that crosses the budget, and so is a block holding an
// alias of itself (which no expansion ends).
func TestAliasBombsAreRefused(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("study: bomb\nl0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 11; i++ {
		fmt.Fprintf(&bomb, "l%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	tests := []struct {
		name, text, want string
	}{
		{"billion laughs", bomb.String(), "x.yaml:6: (alias): *a3 takes the file past 100000 nodes"},
		{"itself", "study: x\nl: &a [1, *a]\n", "x.yaml:2: (alias): *a repeats a block that holds an alias of itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("x.yaml", []byte(tt.text), "")
			// Generous: the unbounded expansion took over 40 s.
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("refused after %s", took)
			}
			var fe *FieldError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &fe) || fe.Line == 0 {
				t.Fatalf("error %v\nwant a FieldError with a line saying %q", err, tt.want)
			}
		})
	}
	// Sharing stays free below the budget: 10 aliases of 10 of 10.
	shared := "study: x\nl0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nl1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\nl2: [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n"
	if _, err := Parse("x.yaml", []byte(shared), ""); err == nil || strings.Contains(err.Error(), "(alias)") {
		t.Fatalf("1,000 nodes through aliases refused, or no error for the unknown keys: %v", err)
	}
}

// A study file is read with a bound: a bigger one, or one that is no
// regular file (a FIFO would block the read forever), is refused.
func TestStudyFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(valid+"# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, ""); err == nil || !strings.Contains(err.Error(), "big.yaml:1: (file): over 1048576 bytes") {
		t.Fatalf("a study file over the cap: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(fifo, ""); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("a FIFO as study file: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO as the study file blocks")
	}
}

// Every error names the line it is about, also those found once the whole
// file is read (a name that refers to nothing, a cycle), those about a
// field the file lacks, and the parser's own.
func TestNoErrorAtLineZero(t *testing.T) {
	tests := []struct {
		name, profile string
		replace       [2]string // applied to valid
	}{
		{"unknown build", "", [2]string{"build: app", "build: ap"}},
		{"unknown after", "", [2]string{"after: [db]", "after: [dbx]"}},
		{"cycle", "", [2]string{"ready: {tcp: \"{addr}\"}", "ready: {tcp: \"{addr}\"}\n    after: [api]"}},
		{"service named as a dependency", "", [2]string{"  pg: {kind: postgres}", "  db: {kind: postgres}"}},
		{"replicas from no axis", "", [2]string{"replicas: 2", "replicas: \"{count}\""}},
		{"replicas from a non-count axis", "", [2]string{"replicas: 2", "replicas: \"{mode}\""}},
		{"hook to no service", "", [2]string{"iterations: 10", "iterations: 10\n      before: [{service: nope, path: /x}]"}},
		{"event on nothing", "", [2]string{"iterations: 10", "iterations: 10\n      events: [{at: 1s, kill: nope}]"}},
		{"load to no service", "", [2]string{"service: api", "service: apx"}},
		{"load to a placeholder", "", [2]string{"service: api", "service: \"{mode}\""}},
		{"setup names twice", "", [2]string{"repetitions: 3\n", "repetitions: 3\nsetup: [{name: s, path: /a}, {name: s, path: /b}]\n"}},
		{"when on no axis", "", [2]string{"    replicas: 2\n", "    replicas: 2\n    when: {nope: [x]}\n"}},
		{"when on the load's service", "", [2]string{"    replicas: 2\n", "    replicas: 2\n    when: {}\n"}},
		{"no profile", "nope", [2]string{"study: demo", "study: demo"}},
		{"no services", "", [2]string{"services:", "servicez:"}},
		{"unknown anchor", "", [2]string{"users: 10", "users: *ten"}},
		{"control character", "", [2]string{"think: 500ms-1s", "think: \"500ms\x01\""}},
		{"empty", "", [2]string{valid, "# nothing\n"}},
		{"instance placeholder in an attribute", "", [2]string{"  lang: [go, java]", "  lang:\n    go: {command: \"{build.app}/server -port {port}\"}\n    java: {command: \"{build.app}/j\"}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(valid, tt.replace[0], tt.replace[1], 1)
			if text == valid && tt.replace[0] != tt.replace[1] {
				t.Fatalf("replacement %q not found", tt.replace[0])
			}
			_, err := Parse("demo.yaml", []byte(text), tt.profile)
			if err == nil {
				t.Fatal("no error")
			}
			for _, e := range leaves(err) {
				var fe *FieldError
				if !errors.As(e, &fe) || fe.Line == 0 {
					t.Errorf("%q has no line", e)
				}
			}
		})
	}
	// What an analysis reads and a study lacks entirely is reported at
	// the top of the file.
	s, err := Parse("demo.yaml", []byte("study: x\nservices:\n  a: {command: x, ready: {tcp: \"{addr}\"}}\nload: {service: a, steps: [{name: s, requests: 1, targets: [{path: /}]}]}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(Needs{Axes: []string{"cpu"}}); err == nil || !strings.HasPrefix(err.Error(), "demo.yaml:1: variants:") {
		t.Fatalf("a missing axis: %v", err)
	}
}

// leaves lists the errors joined in err.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// The load goes to one named service; a newcomer's placeholder there is
// told how to vary what answers instead.
func TestLoadServiceIsOneName(t *testing.T) {
	wantFieldError(t, valid, [2]string{"service: api", `service: "{mode}"`}, `demo.yaml:22: load.service: "{mode}": the load goes to one service, named as it is in services:, in every variant; to vary what answers it, give that service's command from the variant`)
}

// An axis attribute is filled in once per deployment, before any service
// starts: an instance's own placeholder there would fail every variant at
// start, so it is refused with where to write it instead.
func TestAttributesHoldNoLatePlaceholders(t *testing.T) {
	attrs := func(text string) [2]string {
		return [2]string{"  lang: [go, java]", "  lang:\n    go: {command: \"" + text + "\"}\n    java: {command: \"{build.app}/j\"}"}
	}
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"port", attrs("{build.app}/server -port {port}"), `demo.yaml:20: variants.lang.go.command: {port}: each instance's own, unknown when a variant's values are filled in (before any service starts): write it where the value is used, beside it, e.g. command: "{lang.command} --port {port}"`},
		{"addr", attrs("{build.app}/server {addr}"), `variants.lang.go.command: {addr}: each instance's own`},
		{"tmp", attrs("{build.app}/server {tmp}"), `variants.lang.go.command: {tmp}: each instance's own`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, valid, tt.replace, tt.want) })
	}
	// What is known by then stays allowed.
	text := strings.Replace(valid, "  lang: [go, java]", "  lang:\n    go: {command: \"{build.app}/server {service.db.addr} {dep.pg.url}\"}\n    java: {command: \"{build.app}/j\"}", 1)
	if _, err := Parse("demo.yaml", []byte(text), ""); err != nil {
		t.Fatal(err)
	}
}

// Lists multiply: a few short lines of axes or each: loops would name
// more variants or steps than memory holds. Both are refused at the list
// that crosses the bound, and a matrix under it still parses.
func TestExpansionIsBounded(t *testing.T) {
	list := func(n int) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprintf("v%d", i)
		}
		return "[" + strings.Join(vals, ", ") + "]"
	}
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"axes", [2]string{"  mode: [a, b, c]", "  mode: [a, b, c]\n  x: " + list(100) + "\n  y: " + list(100)},
			"demo.yaml:22: variants.y: the axes so far make 60000 variants, over the 10000 one study can run"},
		{"each", [2]string{"    - name: warm\n", "    - name: warm-{a}-{b}\n      each: {a: " + list(200) + ", b: " + list(200) + "}\n"},
			"demo.yaml:25: load.steps[0].each.b: the loops so far make 40000 steps from one template, over the 10000 allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, valid, tt.replace, tt.want) })
	}
	edited := strings.Replace(valid, "  mode: [a, b, c]", "  mode: [a, b, c]\n  x: "+list(100), 1)
	if _, err := Parse("demo.yaml", []byte(edited), ""); err != nil {
		t.Fatalf("600 variants refused: %v", err)
	}
}

// A method or header is written into the request verbatim, so one that is
// no token (or a value with CR or LF) would split the request in two: it
// is refused when the file is read, not when the step runs.
func TestRequestSplittingIsRefused(t *testing.T) {
	target := "targets: [{path: /, expect_status: \"200\"}]"
	tests := []struct {
		name, target, want string
	}{
		{"method with CRLF", `targets: [{path: /, method: "GET / HTTP/1.1\r\nX-Inj: yes\r\n\r\nGET"}]`, `demo.yaml:28: load.steps[0].targets[0].method: method "GET / HTTP/1.1\r\nX-INJ: YES\r\n\r\nGET": want an HTTP token`},
		{"method with a space", `targets: [{path: /, method: "GE T"}]`, `load.steps[0].targets[0].method: method "GE T": want an HTTP token`},
		{"header name with CRLF", `targets: [{path: /, headers: {"X-A\r\nX-B": "1"}}]`, `load.steps[0].targets[0].headers.X-A` + "\r\n" + `X-B: header name "X-A\r\nX-B": want an HTTP token`},
		{"header value with LF", `targets: [{path: /, headers: {X-A: "1\nGET / HTTP/1.1"}}]`, `load.steps[0].targets[0].headers.X-A: header X-A: value "1\nGET / HTTP/1.1" holds the control character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantFieldError(t, valid, [2]string{target, tt.target}, tt.want) })
	}
}

// A step is interleaved unless what it measures is tied to one load or
// its start, or the file says not; a step that cannot be sliced refuses
// interleave: true.
func TestInterleavedSteps(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(valid), "")
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Interleave; w != (Interleaving{Slice: DefaultSlice, Warmup: DefaultSliceWarmup, Rounds: DefaultRounds}) {
		t.Errorf("interleaving %+v, want the defaults", w)
	}
	if frozen, err := Parse("demo.yaml", []byte(strings.Replace(valid, "repetitions: 3\n", "repetitions: 3\ninterleave: {idle: freeze}\n", 1)), ""); err != nil || !frozen.Interleave.Freeze {
		t.Errorf("idle: freeze gave %+v %v", frozen.Interleave, err)
	}
	warm, rate := s.Step("warm"), s.Step("rate")
	if warm.Interleaved || !strings.Contains(warm.Sequential, "fixed number of iterations") || !rate.Interleaved || rate.Sequential != "" {
		t.Errorf("warm interleaved %v (%q), rate %v (%q)", warm.Interleaved, warm.Sequential, rate.Interleaved, rate.Sequential)
	}
	for _, c := range []struct {
		name, from, to string
		why            string // of step rate; "" for interleaved
		profile        string
	}{
		{"said not", "rate: 50.5", "rate: 50.5\n      interleave: false", "the study file says interleave: false", ""},
		{"events", "rate: 50.5", "rate: 50.5\n      events: [{at: 2s, kill: db}]", "its events happen at moments of one load", ""},
		{"fresh", "rate: 50.5", "rate: 50.5\n      fresh: true", "it meets cold caches", ""},
		{"stages", "      rate: 50.5\n      duration: 1m\n      warmup: {duration: 5s}", "      stages: 10s:5,10s:10", "its rate follows stages", ""},
		{"a profile says not", "rate: {rate: 10}", "rate: {rate: 10, interleave: false}", "the study file says interleave: false", "quick"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Every profile is checked, and quick's duration would clash
			// with stages.
			text := strings.Replace(valid, "rate: {duration: 5s, rate: 10}", "rate: {rate: 10}", 1)
			s, err := Parse("demo.yaml", []byte(strings.Replace(text, c.from, c.to, 1)), c.profile)
			if err != nil {
				t.Fatal(err)
			}
			if st := s.Step("rate"); st.Interleaved || !strings.Contains(st.Sequential, c.why) {
				t.Errorf("interleaved %v, sequential %q, want %q", st.Interleaved, st.Sequential, c.why)
			}
		})
	}
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"interleave a step that cannot be", "iterations: 10", "iterations: 10\n      interleave: true", "demo.yaml:28: load.steps[0].interleave: this step cannot be measured in slices: each of its users runs a fixed number of iterations"},
		{"slice too short", "repetitions: 3\n", "repetitions: 3\ninterleave: {slice: 500ms}\n", "interleave.slice: a slice of 500ms is too short"},
		{"idle neither run nor freeze", "repetitions: 3\n", "repetitions: 3\ninterleave: {idle: sleep}\n", `interleave.idle: "sleep": want run`},
		{"warm-up as long as the slice", "repetitions: 3\n", "repetitions: 3\ninterleave: {slice: 2s, warmup: 2s}\n", "interleave.warmup: a slice's warm-up (2s) must be shorter than the slice (2s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse("demo.yaml", []byte(strings.Replace(valid, c.from, c.to, 1)), ""); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
