package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	merrors "go-micro.dev/v5/errors"
)

// claims are the token's: sub, aud, iat and exp, and the authorities
// granted to the subject (a token whose authorities are not a list of
// strings is refused).
type claims struct {
	Authorities []string `json:"authorities"`
	jwt.RegisteredClaims
}

// verifier checks HS256 tokens signed with the shared secret for one
// audience.
type verifier struct {
	key    []byte
	parser *jwt.Parser
}

func newVerifier(secret, audience string) (*verifier, error) {
	if len(secret) < 32 {
		return nil, fmt.Errorf("JWT_SECRET has %d characters; HS256 wants a key of at least 32", len(secret))
	}
	return &verifier{
		key: []byte(secret),
		// Only HS256: a token that names another algorithm (none, or RS256
		// to have the secret taken for a public key) is refused before
		// its signature is looked at.
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
			jwt.WithAudience(audience), jwt.WithExpirationRequired()),
	}, nil
}

// require passes requests with a valid bearer token to next and answers
// the others 401 saying why.
func (v *verifier) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || raw == "" {
			unauthorized(w, "missing bearer token")
			return
		}
		var c claims
		if _, err := v.parser.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return v.key, nil }); err != nil {
			unauthorized(w, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, reason string) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	writeError(w, merrors.Unauthorized(name, "%s", reason))
}
