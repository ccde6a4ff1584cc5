package study

import (
	"strings"
	"testing"
	"time"
)

const withTokens = `study: t
tokens:
  user:
    algorithm: HS256
    expires: 24h
    claims: {sub: msbench, authorities: [ROLE_USER, ROLE_ADMIN], level: 3}
services:
  api: {command: "x", env: {KEY: "{tokens.user.secret}"}, ready: {tcp: "{addr}"}}
load: {service: api, steps: [{name: s, requests: 1, targets: [{path: /, headers: {Authorization: "Bearer {tokens.user.token}"}}]}]}
`

func TestParseTokens(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withTokens), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tokens) != 1 {
		t.Fatalf("tokens %+v", s.Tokens)
	}
	tk := s.Tokens[0]
	if tk.Name != "user" || tk.Algorithm != "HS256" || tk.Expires != 24*time.Hour || tk.Claims["sub"] != "msbench" || tk.Claims["level"] != 3 {
		t.Fatalf("token %+v", tk)
	}
	if a, ok := tk.Claims["authorities"].([]any); !ok || len(a) != 2 || a[1] != "ROLE_ADMIN" {
		t.Fatalf("authorities %#v", tk.Claims["authorities"])
	}
}

func TestTokenErrors(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string
		want    string
	}{
		{"unknown algorithm", [2]string{"algorithm: HS256", "algorithm: none"}, `t.yaml:4: tokens.user.algorithm: "none" is not one of HS256, HS384, HS512, RS256`},
		{"no algorithm", [2]string{"    algorithm: HS256\n", ""}, "tokens.user: missing algorithm"},
		{"bad expiry", [2]string{"expires: 24h", "expires: -1h"}, "t.yaml:5: tokens.user.expires: want a positive duration"},
		{"nested claim", [2]string{"level: 3", "level: {a: 1}"}, "tokens.user.claims.level: want a string, number, boolean or a list of them"},
		{"unknown field", [2]string{"expires: 24h", "expiry: 24h"}, "tokens.user.expiry: unknown field"},
		{"unknown token", [2]string{"{tokens.user.secret}", "{tokens.admin.secret}"}, "{tokens.admin.secret}: want {tokens.NAME.KEY} of a declared token"},
		{"unknown key", [2]string{"{tokens.user.secret}", "{tokens.user.key}"}, "KEY one of token, secret, public_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(withTokens, tc.replace[0]) {
				t.Fatalf("%q not in the study", tc.replace[0])
			}
			_, err := Parse("t.yaml", []byte(strings.Replace(withTokens, tc.replace[0], tc.replace[1], 1)), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
