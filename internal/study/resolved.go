package study

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// newer one: the first field it does not know, if any.
func newerFormat(data []byte, format int) error {
	msg := fmt.Sprintf("study in format %d, written by a newer msbench: this one reads formats up to %d", format, FormatVersion)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&versioned{fields: &fields{}}); err != nil {
		return fmt.Errorf("%s, and cannot read it (%v)", msg, err)
	}
	return fmt.Errorf("%s; it knows every field, but not what format %d changed in their meaning", msg, format)
}
