package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxBodyBytes is far above any valid body: a name is 200 characters.
	maxBodyBytes = 64 << 10
	maxNameChars = 200
)

// apiError is a failure the client caused, with its status and reason.
type apiError struct {
	status int
	reason string
}

func (e *apiError) Error() string { return e.reason }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, reason: fmt.Sprintf(format, args...)}
}

// grantBody and renameBody hold pointers so that a missing field (or null)
// is told apart from a zero value.
type grantBody struct {
	PermissionID *int64 `json:"permission_id"`
}

type renameBody struct {
	Name *string `json:"name"`
}

// pathID reads the path wildcard key as a positive id.
func pathID(r *http.Request, key string) (int64, error) {
	s := r.PathValue(key)
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("%s %q: want a positive integer", key, s)
	}
	return id, nil
}

func decodeGrant(w http.ResponseWriter, r *http.Request) (int64, error) {
	var b grantBody
	if err := decodeBody(w, r, &b); err != nil {
		return 0, err
	}
	switch {
	case b.PermissionID == nil:
		return 0, badRequest(`permission_id is missing: want {"permission_id": <id>}`)
	case *b.PermissionID <= 0:
		return 0, badRequest("permission_id %d: want a positive integer", *b.PermissionID)
	}
	return *b.PermissionID, nil
}

func decodeRename(w http.ResponseWriter, r *http.Request) (string, error) {
	var b renameBody
	if err := decodeBody(w, r, &b); err != nil {
		return "", err
	}
	if b.Name == nil {
		return "", badRequest(`name is missing: want {"name": "<new name>"}`)
	}
	return *b.Name, checkName(*b.Name)
}

// checkName accepts any one-line text of 1 to 200 characters that is not
// only blanks. Quotes, SQL and markup are ordinary characters: queries take
// parameters and answers are JSON-encoded.
func checkName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return badRequest("name is empty")
	case n > maxNameChars:
		return badRequest("name has %d characters, at most %d are allowed", n, maxNameChars)
	case strings.ContainsFunc(name, unicode.IsControl):
		return badRequest("name contains control characters")
	}
	return nil
}

// decodeBody reads one JSON object with only dst's fields into dst.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("body has more after the JSON object")
	}
	return nil
}

// bodyError says what is wrong with a body in the client's terms.
func bodyError(err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		tooBig *http.MaxBytesError
		netErr net.Error
	)
	switch {
	case errors.Is(err, io.EOF):
		return badRequest("body is empty: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: the body ends early")
	case errors.As(err, &syntax):
		return badRequest("malformed JSON at byte %d: %v", syntax.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return badRequest("body is a JSON %s: want an object", typ.Value)
	case errors.As(err, &typ):
		return badRequest("%s: want %s, got JSON %s", typ.Field, typ.Type, typ.Value)
	case errors.As(err, &tooBig):
		return &apiError{status: http.StatusRequestEntityTooLarge, reason: fmt.Sprintf("body over %d bytes", tooBig.Limit)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &apiError{status: http.StatusRequestTimeout, reason: "body not received in time"}
	}
	// What is left is json's "unknown field" error, which reads well as is.
	return badRequest("%v", err)
}
