package study

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// A section's exported field without a yaml tag would be no key at all:
// decode sets only tagged fields, so every field must be one.
func TestEverySectionFieldIsAKey(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type, string)
	visit = func(typ reflect.Type, path string) {
		for {
			switch ptr := reflect.PointerTo(typ); {
			case ptr.Implements(reflect.TypeFor[nodeDecoder]()):
				// A type that reads its own node has no keys; byName's
				// values are sections, though.
				if typ.Kind() == reflect.Slice && strings.HasPrefix(typ.Elem().Name(), "named[") {
					value, _ := typ.Elem().FieldByName("value")
					visit(value.Type, path)
				}
				return
			case ptr.Implements(reflect.TypeFor[yaml.Unmarshaler]()):
				return
			}
			if k := typ.Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Map {
				break
			}
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[fileSection]().PkgPath() || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() && f.Tag.Get("yaml") == "" {
				t.Errorf("%s.%s (%s) has no yaml tag", typ.Name(), f.Name, path)
			}
			visit(f.Type, path+"."+f.Name)
		}
	}
	visit(reflect.TypeFor[fileSection](), "file")
	for _, typ := range []reflect.Type{reflect.TypeFor[stepSection](), reflect.TypeFor[setupTarget](), reflect.TypeFor[hookTarget]()} {
		visit(typ, typ.Name())
	}
	if len(seen) < 10 {
		t.Fatalf("visited %d section types", len(seen))
	}
}

// A profile's override of a step is decoded onto a copy of the step's
// section: what it gives replaces that field whole, the rest stays, and
// overrides apply in file order.
func TestProfileOverrideReplacesWhatItGives(t *testing.T) {
	text := strings.Replace(valid, "      rate: {duration: 5s, rate: 10}\n",
		"      \"*\": {timeout: 3s}\n      warm: {users: 4}\n      rate: {duration: 5s, rate: 10, warmup: {requests: 5}, timeout: 2s}\n", 1)
	if text == valid {
		t.Fatal("the quick profile's override is not in the test study")
	}
	s, err := Parse("demo.yaml", []byte(text), "quick")
	if err != nil {
		t.Fatal(err)
	}
	warm, rate := s.Load.Steps[0], s.Load.Steps[1]
	if warm.Load.Timeout != 3*time.Second || warm.Load.Users != 4 || warm.Load.Iterations != 10 || warm.Load.Think.Max != time.Second || len(warm.Targets) != 1 {
		t.Errorf("warm %+v", warm.Load)
	}
	if rate.Load.Timeout != 2*time.Second || rate.Load.Duration != 5*time.Second || rate.Load.Rate != 10 || !rate.Load.Open || len(rate.Targets) != 2 {
		t.Errorf("rate %+v", rate.Load)
	}
	if rate.Warmup != (Warmup{Requests: 5}) {
		t.Errorf("rate's warm-up %+v: an override replaces a field whole", rate.Warmup)
	}
	// The study as written is untouched by the profile.
	base, err := Parse("demo.yaml", []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	if st := base.Load.Steps[1]; st.Load.Timeout != 0 || st.Warmup != (Warmup{Duration: 5 * time.Second}) {
		t.Errorf("without the profile, rate %+v, warm-up %+v", st.Load, st.Warmup)
	}
}
