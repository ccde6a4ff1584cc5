package study

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const withWhen = `study: w
variants:
  framework: [spring, nest, micro]
services:
  registry:
    command: "reg"
    when: {framework: [spring, micro]}
    ready: {tcp: "{addr}"}
  gateway: {command: "gw", ready: {tcp: "{addr}"}}
load: {service: gateway, steps: [{name: s, requests: 1, targets: [{path: /}]}]}
profiles:
  nest-only: {variants: {framework: [nest]}}
`

func TestWhen(t *testing.T) {
	for _, profile := range []string{"", "nest-only"} {
		s, err := Parse("w.yaml", []byte(withWhen), profile)
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		for _, v := range s.Matrix() {
			want := v.Get("framework") != "nest"
			if got := s.Service("registry").RunsIn(v); got != want {
				t.Errorf("registry runs in %s: %v, want %v", v.Key(), got, want)
			}
			if !s.Service("gateway").RunsIn(v) {
				t.Errorf("gateway does not run in %s", v.Key())
			}
		}
	}
}

func TestWhenErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"unknown axis", [2]string{"when: {framework:", "when: {impl:"}, "w.yaml:7: services.registry.when.impl: no such axis in variants"},
		{"unknown value", [2]string{"[spring, micro]}", "[spring, go]}"}, `w.yaml:7: services.registry.when.framework: "go" is not a value of axis framework`},
		{"on the load's service", [2]string{"load: {service: gateway", "load: {service: registry"}, "services.registry.when: the load goes to registry, so it runs in every variant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("w.yaml", []byte(strings.Replace(withWhen, tc.replace[0], tc.replace[1], 1)), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Instances: none where a service does not run, its replicas, or its
// axis's value in the variant.
func TestInstances(t *testing.T) {
	const yaml = `study: n
variants:
  framework: [spring, nest]
  instances: ["1", "3"]
services:
  registry:
    command: "reg"
    when: {framework: [spring]}
    ready: {tcp: "{addr}"}
  cache: {command: "c", replicas: 2, ready: {tcp: "{addr}"}}
  gateway: {command: "gw", replicas: "{instances}", ready: {tcp: "{addr}"}}
load: {service: gateway, steps: [{name: s, requests: 1, targets: [{path: /}]}]}
`
	s, err := Parse("n.yaml", []byte(yaml), "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range s.Matrix() {
		var counts []string
		for _, svc := range s.Services {
			counts = append(counts, fmt.Sprintf("%s=%d", svc.Name, svc.Instances(v)))
		}
		got[v.Key()] = strings.Join(counts, " ")
	}
	want := map[string]string{
		"spring-1": "registry=1 cache=2 gateway=1",
		"spring-3": "registry=1 cache=2 gateway=3",
		"nest-1":   "registry=0 cache=2 gateway=1",
		"nest-3":   "registry=0 cache=2 gateway=3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
