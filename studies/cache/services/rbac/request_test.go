package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

// wantAPIError checks err is an apiError of status whose reason says want.
func wantAPIError(t *testing.T, err error, status int, want string) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != status || !strings.Contains(ae.reason, want) {
		t.Errorf("error %v, want %d mentioning %q", err, status, want)
	}
}

func TestDecodeGrant(t *testing.T) {
	for body, want := range map[string]string{
		``:                              "body is empty",
		`{"permission_id": 7`:           "ends early",
		`{"permission_id": 7,}`:         "malformed JSON at byte",
		`{"permission_id": "7"}`:        "permission_id: want int64, got JSON string",
		`{"permission_id": 1.5}`:        "permission_id: want int64, got JSON number 1.5",
		`{"permission_id": 1e30}`:       "got JSON number 1e30",
		`[7]`:                           "body is a JSON array: want an object",
		`{}`:                            "permission_id is missing",
		`{"permission_id": null}`:       "permission_id is missing",
		`{"permission_id": 0}`:          "want a positive integer",
		`{"permission_id": -3}`:         "want a positive integer",
		`{"permission_id": 7, "x": 1}`:  `unknown field "x"`,
		`{"permission_id": 7} {"a": 1}`: "more after the JSON object",
		`{"permission_id": 7} trailing`: "more after the JSON object",
	} {
		r := httptest.NewRequest(http.MethodPost, "/roles/1/permissions", strings.NewReader(body))
		_, err := decodeGrant(httptest.NewRecorder(), r)
		wantAPIError(t, err, http.StatusBadRequest, want)
	}
	r := httptest.NewRequest(http.MethodPost, "/roles/1/permissions", strings.NewReader(` {"permission_id": 7}`+"\n"))
	if id, err := decodeGrant(httptest.NewRecorder(), r); id != 7 || err != nil {
		t.Errorf("got %d, %v; want 7", id, err)
	}
}

func TestDecodeTooLarge(t *testing.T) {
	body := `{"name": "` + pad(maxBodyBytes) + `"}`
	r := httptest.NewRequest(http.MethodPatch, "/roles/1", strings.NewReader(body))
	_, err := decodeRename(httptest.NewRecorder(), r)
	wantAPIError(t, err, http.StatusRequestEntityTooLarge, "body over")
}

// A body that stops coming ends at the server's read timeout, which the
// body reader reports.
func TestDecodeTimeout(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/roles/1/permissions", iotest.ErrReader(os.ErrDeadlineExceeded))
	_, err := decodeGrant(httptest.NewRecorder(), r)
	wantAPIError(t, err, http.StatusRequestTimeout, "not received in time")
}

func pad(n int) string { return strings.Repeat(" ", n) }

func TestDecodeRename(t *testing.T) {
	for body, want := range map[string]string{
		`{"name": 5}`:       "name: want string, got JSON number",
		`{}`:                "name is missing",
		`{"name": ""}`:      "name is empty",
		`{"name": "  \t "}`: "name is empty",
		`{"name": "` + strings.Repeat("é", 201) + `"}`: "201 characters, at most 200",
		`{"name": "two\nlines"}`:                       "control characters",
		`{"name": "nul\u0000"}`:                        "control characters",
	} {
		r := httptest.NewRequest(http.MethodPatch, "/roles/1", strings.NewReader(body))
		_, err := decodeRename(httptest.NewRecorder(), r)
		wantAPIError(t, err, http.StatusBadRequest, want)
	}
	for _, name := range []string{
		"'; DROP TABLE roles; --",
		"<script>alert(1)</script>",
		strings.Repeat("é", 200),
		"  padded  ",
	} {
		body, _ := json.Marshal(map[string]string{"name": name})
		r := httptest.NewRequest(http.MethodPatch, "/roles/1", strings.NewReader(string(body)))
		if got, err := decodeRename(httptest.NewRecorder(), r); got != name || err != nil {
			t.Errorf("got %q, %v; want %q kept as it is", got, err, name)
		}
	}
}

func TestPathID(t *testing.T) {
	mux := http.NewServeMux()
	var got int64
	var err error
	mux.HandleFunc("GET /roles/{id}", func(_ http.ResponseWriter, r *http.Request) { got, err = pathID(r, "id") })
	for path, want := range map[string]int64{
		"/roles/1": 1, "/roles/42": 42, "/roles/9223372036854775807": 1<<63 - 1,
		"/roles/0": 0, "/roles/-3": 0, "/roles/abc": 0, "/roles/1.5": 0, "/roles/9223372036854775808": 0,
	} {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		if want > 0 && (got != want || err != nil) {
			t.Errorf("%s: got %d, %v; want %d", path, got, err, want)
		}
		if want == 0 {
			wantAPIError(t, err, http.StatusBadRequest, "want a positive integer")
		}
	}
}

func TestSnapshotRole(t *testing.T) {
	s := &snapshot{Roles: []role{{ID: 2, Name: "b"}, {ID: 5, Name: "e"}, {ID: 9, Name: "i"}}}
	for id, want := range map[int64]string{2: "b", 5: "e", 9: "i", 1: "", 3: "", 10: ""} {
		r, ok := s.role(id)
		if ok != (want != "") || r.Name != want {
			t.Errorf("role(%d) = %+v, %v; want %q", id, r, ok, want)
		}
	}
}
