package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestFailStatus(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"bad-request", badRequest("name is empty"), http.StatusBadRequest},
		{"no-role", fmt.Errorf("grant permission 1 to role 9: %w", errNoRole), http.StatusNotFound},
		{"no-permission", fmt.Errorf("revoke: %w", errNoPermission), http.StatusNotFound},
		{"name-taken", fmt.Errorf("rename role 2: %w", errNameTaken), http.StatusConflict},
		{"refused", fmt.Errorf("read roles: %w", refused), http.StatusServiceUnavailable},
		{"timeout", fmt.Errorf("read roles: %w", context.DeadlineExceeded), http.StatusServiceUnavailable},
		{"shutting-down", &pgconn.PgError{Code: "57P01", Message: "terminating connection"}, http.StatusServiceUnavailable},
		{"too-many-connections", &pgconn.PgError{Code: "53300"}, http.StatusServiceUnavailable},
		{"bug", &pgconn.PgError{Code: "42601", Message: "syntax error"}, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			fail(rec, tc.err)
			if rec.Code != tc.status || rec.Body.Len() == 0 {
				t.Errorf("status %d body %q, want %d with a reason", rec.Code, rec.Body, tc.status)
			}
		})
	}
	rec := httptest.NewRecorder()
	fail(rec, fmt.Errorf("read roles: %w", context.Canceled))
	if rec.Body.Len() != 0 {
		t.Errorf("answered %q to a client that left", rec.Body)
	}
}
