package deppod

import (
	"maps"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/deps"
)

func TestPassword(t *testing.T) {
	good := strings.Repeat("Ab3", 8)
	tests := []struct {
		kind    deps.Kind
		env     map[string]string
		want    string
		wantErr string
	}{
		{deps.Postgres, map[string]string{PasswordEnv: good}, good, ""},
		{deps.RabbitMQ, map[string]string{PasswordEnv: good}, good, ""},
		{deps.Mongo, nil, "", ""}, // FerretDB has no account
		{deps.Redis, nil, "", "environment variable " + PasswordEnv},
		{deps.MariaDB, map[string]string{PasswordEnv: ""}, "", "environment variable " + PasswordEnv},
		{deps.Postgres, map[string]string{PasswordEnv: "x y" + good}, "", PasswordEnv + ": password has a character"},
		{"oracle", nil, "", "unknown dependency"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			got, err := Password(tt.kind, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				if v := tt.env[PasswordEnv]; v != "" && strings.Contains(err.Error(), v) {
					t.Errorf("the error shows the value: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Password = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// The values printed hold the placeholder where the password was, and
// Resolve gives them back.
func TestValuesRoundTrip(t *testing.T) {
	const password = "SECRETSECRETSECRET"
	values := map[string]string{
		"url":      "postgres://msbench:" + password + "@10.0.0.5:5432/msbench",
		"password": password,
		"host":     "10.0.0.5",
	}
	printed := replaceAll(values, password, PasswordPlaceholder)
	for k, v := range printed {
		if strings.Contains(v, password) {
			t.Errorf("%s = %q holds the password", k, v)
		}
	}
	if printed["url"] != "postgres://msbench:{password}@10.0.0.5:5432/msbench" {
		t.Errorf("url printed as %q", printed["url"])
	}
	if got := (Event{Values: printed}).Resolve(password); !maps.Equal(got, values) {
		t.Errorf("Resolve = %v, want %v", got, values)
	}
	// No password (mongo): the values are printed as they are.
	if got := replaceAll(values, "", PasswordPlaceholder); !maps.Equal(got, values) {
		t.Errorf("without a password: %v", got)
	}
}
