package main

import (
	"encoding/json"
	"errors"
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

// UnmarshalJSON refuses an exp or nbf that is not a JSON number, as RFC
// 7519 §2 defines a NumericDate: golang-jwt's NumericDate takes a string
// of digits too ("exp":"9999999999").
func (c *claims) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, name := range []string{"exp", "nbf"} {
		if v, ok := raw[name]; ok {
			if err := json.Unmarshal(v, new(float64)); err != nil {
				return fmt.Errorf("%s is not a number: %w", name, err)
			}
		}
	}
	type plain claims // without this method, so that decoding it does not recurse
	return json.Unmarshal(b, (*plain)(c))
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
		if _, err := v.parser.ParseWithClaims(raw, &c, v.keyFor); err != nil {
			unauthorized(w, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// keyFor is the parser's key function: the secret, for a token without
// crit. golang-jwt ignores crit, but RFC 7515 §4.1.11 requires refusing a
// token whose crit names an extension the recipient does not understand,
// and this gateway understands none.
func (v *verifier) keyFor(t *jwt.Token) (any, error) {
	if _, ok := t.Header["crit"]; ok {
		return nil, errors.New("crit names extensions this gateway does not understand")
	}
	return v.key, nil
}

func unauthorized(w http.ResponseWriter, reason string) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	writeError(w, merrors.Unauthorized(name, "%s", reason))
}
