package study

import (
	"strings"
	"testing"
)

const sweep = `study: sweep
builds:
  gin: {dir: services/x, command: "go build -o {out}/ ."}
  spring: {dir: services/y, command: "./build.sh && cp app.jar {out}/"}
variants:
  impl:
    gin: {command: "{build.gin}/server", virtual: "false"}
    spring-virtual: {command: "{build.spring}/run.sh", virtual: "true"}
services:
  app:
    command: "{impl.command}"
    env: {VIRTUAL: "{impl.virtual}", ADDR: "{addr}"}
    ready: {tcp: "{addr}"}
load:
  service: app
  steps:
    - name: post-{format}-{size}
      each: {format: [png, jpg], size: [17k, 1m]}
      users: 1
      requests: 10
      targets: [{method: POST, path: /images, form: {image: "@{root}/corpus/{format}-{size}.{format}"}}]
    - name: fetch
      users: 1
      requests: 10
      targets: [{path: /images/1}]
profiles:
  quick:
    skip: ["*-1m"]
    steps:
      "post-*": {requests: 2}
`

func TestStepTemplatesAndAxisAttributes(t *testing.T) {
	s, err := Parse("sweep.yaml", []byte(sweep), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Load.Steps {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, " "); got != "post-png-17k post-png-1m post-jpg-17k post-jpg-1m fetch" {
		t.Fatalf("steps %s", got)
	}
	if f := s.Load.Steps[3].Targets[0].Form[0][1]; f != "@{root}/corpus/jpg-1m.jpg" {
		t.Fatalf("form %q", f)
	}
	p := s.Placeholders(s.Matrix()[1])
	if p["impl"] != "spring-virtual" || p["impl.command"] != "{build.spring}/run.sh" || p["impl.virtual"] != "true" {
		t.Fatalf("placeholders %v", p)
	}
	q, err := Parse("sweep.yaml", []byte(sweep), "quick")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Load.Steps) != 3 || q.Load.Steps[0].Load.Requests != 2 || q.Load.Steps[2].Load.Requests != 10 {
		t.Fatalf("quick: %d steps, requests %d and %d", len(q.Load.Steps), q.Load.Steps[0].Load.Requests, q.Load.Steps[2].Load.Requests)
	}
}

func TestSweepMistakes(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"attributes differ", [2]string{`virtual: "true"}`, `virt: "true"}`}, "every value of an axis gives the same ones"},
		{"unknown attribute", [2]string{"{impl.virtual}", "{impl.threads}"}, "{impl.threads}: unknown placeholder"},
		{"skip matches nothing", [2]string{`"*-1m"`, `"*-2m"`}, `"*-2m" matches no step`},
		{"override matches nothing", [2]string{`"post-*"`, `"put-*"`}, "profiles.quick.steps.put-*: no step of that name"},
		{"loop named like a placeholder", [2]string{"each: {format:", "each: {port:"}, "a loop name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(sweep, tt.replace[0], tt.replace[1], 1)
			if text == sweep {
				t.Fatalf("%q not found", tt.replace[0])
			}
			if _, err := Parse("sweep.yaml", []byte(text), ""); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
