package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/apicheck"
)

// checkBadInput: what a client gets wrong is answered 400, 404 or 409 with
// a reason and changes nothing; names that look like SQL or markup are
// stored and returned as they are.
func checkBadInput(ctx context.Context, t *testing.T, d *deployment) {
	a := d.instances[0]
	before := dbVersion(ctx, t, d.db)
	var role3 string
	if err := d.db.QueryRow(ctx, "SELECT name FROM roles WHERE id = 3").Scan(&role3); err != nil {
		t.Fatal(err)
	}
	taken, _ := json.Marshal(map[string]string{"name": role3})
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		reason                   string
	}{
		{"malformed-json", "POST", "/roles/1/permissions", `{"permission_id": 7`, 400, "malformed JSON"},
		{"not-json", "POST", "/roles/1/permissions", `permission_id=7`, 400, "malformed JSON"},
		{"empty-body", "POST", "/roles/1/permissions", ``, 400, "body is empty"},
		{"wrong-type", "POST", "/roles/1/permissions", `{"permission_id": "7"}`, 400, "permission_id"},
		{"fraction", "POST", "/roles/1/permissions", `{"permission_id": 7.5}`, 400, "permission_id"},
		{"missing-field", "POST", "/roles/1/permissions", `{}`, 400, "permission_id is missing"},
		{"unknown-field", "POST", "/roles/1/permissions", `{"permission_id": 7, "role": 1}`, 400, "unknown field"},
		{"not-an-object", "POST", "/roles/1/permissions", `[7]`, 400, "want an object"},
		{"unknown-role", "POST", "/roles/9999/permissions", `{"permission_id": 1}`, 404, "no such role"},
		{"unknown-permission", "POST", "/roles/1/permissions", `{"permission_id": 9999}`, 404, "no such permission"},
		{"revoke-unknown-role", "DELETE", "/roles/9999/permissions/1", ``, 404, "no such role"},
		{"revoke-unknown-permission", "DELETE", "/roles/1/permissions/9999", ``, 404, "no such permission"},
		{"rename-unknown-role", "PATCH", "/roles/9999", `{"name": "x"}`, 404, "no such role"},
		{"get-unknown-role", "GET", "/roles/9999", ``, 404, "no such role"},
		{"id-word", "GET", "/roles/abc", ``, 400, "positive integer"},
		{"id-zero", "PATCH", "/roles/0", `{"name": "x"}`, 400, "positive integer"},
		{"pid-word", "DELETE", "/roles/1/permissions/x", ``, 400, "positive integer"},
		{"empty-name", "PATCH", "/roles/1", `{"name": ""}`, 400, "name is empty"},
		{"blank-name", "PATCH", "/roles/1", `{"name": "   "}`, 400, "name is empty"},
		{"long-name", "PATCH", "/roles/1", `{"name": "` + strings.Repeat("x", 201) + `"}`, 400, "at most 200"},
		{"name-wrong-type", "PATCH", "/roles/1", `{"name": 5}`, 400, "name"},
		{"name-taken", "PATCH", "/roles/2", string(taken), 409, "another role has this name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			contentType := ""
			if c.body != "" {
				contentType = jsonType
			}
			r := apicheck.Call(t, c.method, a.base+c.path, contentType, []byte(c.body))
			apicheck.WantError(t, c.method+" "+c.path, r, c.status, c.reason)
			wantHeader(t, r, "Content-Type", jsonType)
		})
	}
	if after := dbVersion(ctx, t, d.db); after != before {
		t.Errorf("data_version went from %d to %d through failed requests", before, after)
	}

	for id, name := range map[string]string{
		"1": "'; DROP TABLE roles; --",
		"2": "<script>alert(1)</script>",
		"4": strings.Repeat("é", 200), // 200 characters, 400 bytes
	} {
		body, _ := json.Marshal(map[string]string{"name": name})
		r := apicheck.Call(t, http.MethodPatch, a.base+"/roles/"+id, jsonType, body)
		mustStatus(t, "PATCH /roles/"+id, r, http.StatusOK)
		got := apicheck.Get(t, a.base+"/roles/"+id)
		mustStatus(t, "GET /roles/"+id, got, http.StatusOK)
		if n := apicheck.Decode[role](t, got).Name; n != name {
			t.Errorf("role %s is named %q, want %q as sent", id, n, name)
		}
		// JSON-encoded for a browser too: markup comes back escaped.
		if bytes.Contains(got.Body, []byte("<script>")) {
			t.Errorf("answer %q carries markup unescaped", got.Body)
		}
		var stored string
		if err := d.db.QueryRow(ctx, "SELECT name FROM roles WHERE id = $1", id).Scan(&stored); err != nil || stored != name {
			t.Errorf("role %s stored as %q (%v), want %q", id, stored, err, name)
		}
	}
	var n int
	if err := d.db.QueryRow(ctx, "SELECT count(*) FROM roles").Scan(&n); err != nil || n != 50 {
		t.Errorf("%d roles (%v) after the SQL-looking name, want 50", n, err)
	}
}
