package study

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// A study file's schema is its section structs: a field's yaml tag is the
// only place its key is spelled, and its type says how its value is read.
// yaml.v3 decodes tagged structs too, but stops at the first mistake and
// names no field; decode walks the node tree into them itself, so that
// every mistake is reported at once with its file, line and dotted field.
//
// decode knows structs (mappings of known keys), slices, maps, pointers,
// strings and booleans; a type that reads its own node implements
// yaml.Unmarshaler (a scalar: a duration, a size) or nodeDecoder (what
// needs the decoder: placeholders to record, entries in file order).

// nodeDecoder is a field type that reads its node with the decoder's help.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, field string)
}

// validator is a section that checks itself once read: what no one field
// says alone (a build needs dir and command). It reports through d, at
// field or its subfields, whose lines decode recorded.
type validator interface {
	validate(d *decoder, field string)
}

// decode sets v, addressable, from n. A key given replaces the whole value
// of its field, so that decoding a profile's override onto a copy of a
// section changes what the override gives and nothing else.
func (d *decoder) decode(n *yaml.Node, field string, v reflect.Value) {
	switch u := v.Addr().Interface().(type) {
	case *yaml.Node:
		*u = *n
		return
	case nodeDecoder:
		u.decodeNode(d, n, field)
		return
	case yaml.Unmarshaler:
		if err := u.UnmarshalYAML(n); err != nil {
			d.errorf(n, field, "%v", err)
		}
		return
	case encoding.TextUnmarshaler:
		s, err := scalar(n)
		if err == nil {
			err = u.UnmarshalText([]byte(s))
		}
		if err != nil {
			d.errorf(n, field, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		d.decode(n, field, v.Elem())
	case reflect.Struct:
		d.decodeStruct(n, field, v)
	case reflect.Slice:
		d.decodeSlice(n, field, v)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, e := range d.mapping(n, field) {
			ev := reflect.New(v.Type().Elem()).Elem()
			d.decode(e.value, join(field, e.key), ev)
			m.SetMapIndex(reflect.ValueOf(e.key).Convert(v.Type().Key()), ev)
		}
		v.Set(m)
	case reflect.String:
		s, err := scalar(n)
		if err != nil {
			d.errorf(n, field, "%v", err)
		}
		v.SetString(s)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			d.errorf(n, field, "want true or false, got %q", n.Value)
		}
		v.SetBool(b)
	default:
		// A section's field of a type decode does not know is a mistake
		// of msbench, found by the first test that reads the field.
		panic(fmt.Sprintf("study: no decoding for %s at %s", v.Type(), field))
	}
}

// decodeStruct reads a mapping whose keys are the struct's yaml tags,
// reporting any other key (a typo must not be silently ignored), and has
// the section validate itself.
func (d *decoder) decodeStruct(n *yaml.Node, field string, v reflect.Value) {
	keys, index := sectionFields(v.Type())
	for _, e := range d.mapping(n, field, keys...) {
		fv := v.FieldByIndex(index[e.key])
		fv.SetZero()
		d.decode(e.value, join(field, e.key), fv)
	}
	if val, ok := v.Addr().Interface().(validator); ok && n.Kind == yaml.MappingNode {
		val.validate(d, field)
	}
}

// sectionFields lists a section's keys in field order and where each is,
// the fields of an embedded struct tagged ",inline" among them.
func sectionFields(t reflect.Type) ([]string, map[string][]int) {
	var keys []string
	index := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline":
			inner, at := sectionFields(f.Type)
			keys = append(keys, inner...)
			for k, idx := range at {
				index[k] = append([]int{i}, idx...)
			}
		case name != "" && name != "-":
			keys = append(keys, name)
			index[name] = []int{i}
		}
	}
	return keys, index
}

// decodeSlice reads a list; a list of strings may be given as one string.
func (d *decoder) decodeSlice(n *yaml.Node, field string, v reflect.Value) {
	items := []*yaml.Node{n}
	if n.Kind != yaml.ScalarNode || v.Type().Elem().Kind() != reflect.String {
		items = d.sequence(n, field)
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, c := range items {
		f := field
		if c != n {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		d.decode(c, f, out.Index(i))
	}
	v.Set(out)
}

// template is a text whose placeholders ({addr}, {build.NAME}) are filled
// in at start; they are recorded to be checked once every name is known.
type template string

func (t *template) decodeNode(d *decoder, n *yaml.Node, field string) {
	s, err := scalar(n)
	if err != nil {
		d.errorf(n, field, "%v", err)
	}
	*t = template(s)
	d.placeholders(n, field, s)
}

// pairs is a mapping of strings in file order (a header's order, an
// environment's, is the file's).
type pairs [][2]string

func (p *pairs) decodeNode(d *decoder, n *yaml.Node, field string) {
	*p = d.pairs(n, field, false)
}

// templatePairs are pairs whose names and values may hold placeholders.
type templatePairs pairs

func (p *templatePairs) decodeNode(d *decoder, n *yaml.Node, field string) {
	*p = templatePairs(d.pairs(n, field, true))
}

func (d *decoder) pairs(n *yaml.Node, field string, templates bool) pairs {
	var out pairs
	for _, e := range d.mapping(n, field) {
		f := join(field, e.key)
		s, err := scalar(e.value)
		if err != nil {
			d.errorf(e.value, f, "%v", err)
		}
		if templates {
			d.placeholders(e.keyN, f, e.key)
			d.placeholders(e.value, f, s)
		}
		out = append(out, [2]string{e.key, s})
	}
	return out
}

// byName is a mapping from names the file chooses (services, builds) to
// sections, in file order, which matters: it is the start order and the
// order of a report's columns.
type byName[T any] []named[T]

type named[T any] struct {
	name  string
	key   *yaml.Node
	value T
}

func (m *byName[T]) decodeNode(d *decoder, n *yaml.Node, field string) {
	*m = nil
	for _, e := range d.mapping(n, field) {
		item := named[T]{name: e.key, key: e.keyN}
		d.decode(e.value, join(field, e.key), reflect.ValueOf(&item.value).Elem())
		*m = append(*m, item)
	}
}

// claims are a token's claims: names to strings, numbers, booleans or
// lists of them, as JSON carries them.
type claims map[string]any

func (c *claims) decodeNode(d *decoder, n *yaml.Node, field string) {
	*c = claims{}
	plain := func(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag != "!!null" }
	for _, e := range d.mapping(n, field) {
		f := join(field, e.key)
		if !plain(e.value) && (e.value.Kind != yaml.SequenceNode || slices.ContainsFunc(e.value.Content, func(v *yaml.Node) bool { return !plain(v) })) {
			d.errorf(e.value, f, "want a string, number, boolean or a list of them")
			continue
		}
		var v any
		if err := e.value.Decode(&v); err != nil {
			d.errorf(e.value, f, "%v", err)
			continue
		}
		(*c)[e.key] = v
	}
}
