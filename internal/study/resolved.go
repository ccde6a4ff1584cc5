package study

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// A run keeps its Study as study.resolved.json, and every later report of
// the run reads it back, perhaps with a newer msbench. So the JSON names
// are pinned by tags (renaming a Go field must not empty old runs), and the
// file says which format it is in: FormatVersion, written beside the
// study's fields. A file without one was written before formats were
// numbered, in format 1's names, and reads as format 1.

// FormatVersion is the format of study.resolved.json this msbench writes.
// Raise it when a field changes meaning or name, and read the older
// formats on.
const FormatVersion = 1

// fields is Study without its methods, so that encoding it does not call
// MarshalJSON again.
type fields Study

// versioned is study.resolved.json: the format and the study's fields.
type versioned struct {
	Format int `json:"Format"`
	*fields
}

func (s Study) MarshalJSON() ([]byte, error) {
	return json.Marshal(versioned{FormatVersion, (*fields)(&s)})
}

func (s *Study) UnmarshalJSON(data []byte) error {
	var head struct{ Format int }
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("study: %w", err)
	}
	if head.Format > FormatVersion {
		return newerFormat(data, head.Format)
	}
	if err := json.Unmarshal(data, &versioned{fields: (*fields)(s)}); err != nil {
		return fmt.Errorf("study: %w", err)
	}
	return nil
}

// newerFormat says what this msbench cannot read of a study written by a
// newer one: every field it does not know.
func newerFormat(data []byte, format int) error {
	msg := fmt.Sprintf("study in format %d, written by a newer msbench: this one reads formats up to %d", format, FormatVersion)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("%s, and cannot read it: %w", msg, err)
	}
	if unknown := unknownFields(v, reflect.TypeFor[versioned](), ""); len(unknown) > 0 {
		return fmt.Errorf("%s, and does not know %s", msg, strings.Join(unknown, ", "))
	}
	return fmt.Errorf("%s; it knows every field, but not what format %d changed in their meaning", msg, format)
}

// unknownFields lists the paths of the keys in v, decoded JSON, that the
// type t it is read into has no field for.
func unknownFields(v any, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch v := v.(type) {
	case map[string]any:
		known := map[string]reflect.Type{}
		if t.Kind() == reflect.Struct {
			jsonFields(t, known)
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			ft, ok := known[k]
			switch {
			case t.Kind() == reflect.Map:
				out = append(out, unknownFields(v[k], t.Elem(), path+"["+k+"]")...)
			case ok:
				out = append(out, unknownFields(v[k], ft, join(path, k))...)
			default:
				out = append(out, join(path, k))
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range v {
				out = append(out, unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return out
}

// jsonFields adds the JSON names of t's fields to known, with their types,
// those of embedded structs as encoding/json promotes them.
func jsonFields(t reflect.Type, known map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "":
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			jsonFields(ft, known)
		default:
			known[cmp.Or(name, f.Name)] = f.Type
		}
	}
}
