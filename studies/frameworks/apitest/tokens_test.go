package apitest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// signer makes the tokens a gateway must refuse from the one it must
// accept: the token the study mints for its load (tokens.user), and the
// deployment's JWT_SECRET that signed it.
type signer struct {
	secret string
	valid  jwt.MapClaims // the study's token's claims
}

// newSigner reads the study's token, which the secret must verify.
func newSigner(t *testing.T, token, secret string) signer {
	t.Helper()
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()})).
		ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil })
	if err != nil {
		t.Fatalf("the study's token: %v", err)
	}
	return signer{secret: secret, valid: claims}
}

// claims are a copy of the valid token's.
func (s signer) claims() jwt.MapClaims { return maps.Clone(s.valid) }

func randomSecret() string { return rand.Text() + rand.Text() } // 52 ASCII characters

// sign makes an HS256 token of c with key.
func sign(t *testing.T, c jwt.MapClaims, key string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// badToken is an Authorization header the gateway must answer 401, and a
// word its reason must contain ("" for any reason).
type badToken struct {
	name, header, says string
}

func (s signer) badTokens(t *testing.T) []badToken {
	t.Helper()
	bearer := func(tok string) string { return "Bearer " + tok }

	expired := s.claims()
	expired["iat"] = time.Now().Add(-2 * time.Hour).Unix()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	other := s.claims()
	other["aud"] = "someone-else"

	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, s.claims()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs256, err := jwt.NewWithClaims(jwt.SigningMethodRS256, s.claims()).SignedString(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	noExp := s.claims()
	delete(noExp, "exp")
	// RFC 7519 §2: a NumericDate is a JSON number, not a string of digits.
	stringExp, stringNbf := s.claims(), s.claims()
	stringExp["exp"] = "9999999999"
	stringNbf["nbf"] = "1"
	// RFC 7515 §4.1.11: a recipient must refuse a token whose crit names
	// an extension it does not understand, and no gateway understands any.
	crit := jwt.NewWithClaims(jwt.SigningMethodHS256, s.claims())
	crit.Header["crit"] = []string{"x-msbench"}
	crit.Header["x-msbench"] = true
	critical, err := crit.SignedString([]byte(s.secret))
	if err != nil {
		t.Fatal(err)
	}
	return []badToken{
		{"missing", "", ""},
		{"not a bearer token", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:password")), ""},
		{"not a JWT", bearer("not-a-jwt"), ""},
		{"bad signature", bearer(sign(t, s.claims(), randomSecret())), ""},
		{"expired", bearer(sign(t, expired, s.secret)), "expired"},
		{"alg none", bearer(none), ""},
		{"RS256", bearer(rs256), ""},
		// Algorithm confusion: the header says RS256, the signature is an
		// HMAC with the shared secret, as a verifier that takes the
		// secret for a public key would accept.
		{"RS256 header, HMAC signature", bearer(s.confused(t)), ""},
		{"another audience", bearer(sign(t, other, s.secret)), "aud"},
		{"no exp", bearer(sign(t, noExp, s.secret)), "exp"},
		{"exp a string", bearer(sign(t, stringExp, s.secret)), ""},
		{"nbf a string", bearer(sign(t, stringNbf, s.secret)), ""},
		{"unknown crit", bearer(critical), ""},
		{"+/ in the header", bearer(s.standardBase64(t, 0, false)), ""},
		{"+/ in the claims", bearer(s.standardBase64(t, 1, false)), ""},
		{"+/ in the signature", bearer(s.standardBase64(t, 2, false)), ""},
		{"= padding in the header", bearer(s.standardBase64(t, 0, true)), ""},
		{"= padding in the claims", bearer(s.standardBase64(t, 1, true)), ""},
		{"= padding in the signature", bearer(s.standardBase64(t, 2, true)), ""},
	}
}

// standardBase64 is a token signed with the secret whose segment seg (0
// the header, 1 the claims, 2 the signature) is in base64's standard
// alphabet where JWS wants base64url (RFC 7515 §2): with '+' or '/', or,
// when padded, with '=' padding, which base64url in a JWS never has. A
// verifier that decodes leniently and signs the segments as they came
// takes it for valid. The header's kid and a claim grow until the segment
// has such a character.
func (s signer) standardBase64(t *testing.T, seg int, padded bool) string {
	t.Helper()
	for n := range 64 {
		var parts [3]string
		encode := func(i int, b []byte) {
			switch {
			case i != seg:
				parts[i] = base64.RawURLEncoding.EncodeToString(b)
			case padded:
				parts[i] = base64.StdEncoding.EncodeToString(b)
			default:
				parts[i] = base64.RawStdEncoding.EncodeToString(b)
			}
		}
		filler := strings.Repeat("~", n)
		c := s.claims()
		c["jti"] = filler
		for i, v := range []any{map[string]string{"alg": "HS256", "typ": "JWT", "kid": filler}, c} {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			encode(i, b)
		}
		mac := hmac.New(sha256.New, []byte(s.secret))
		mac.Write([]byte(parts[0] + "." + parts[1]))
		encode(2, mac.Sum(nil))
		if padded && strings.Contains(parts[seg], "=") || !padded && strings.ContainsAny(parts[seg], "+/") {
			return strings.Join(parts[:], ".")
		}
	}
	t.Fatalf("no token with segment %d in standard base64 (padded %v)", seg, padded)
	return ""
}

// confused is a token whose header says RS256 but whose signature is
// HMAC-SHA256 with the shared secret.
func (s signer) confused(t *testing.T) string {
	t.Helper()
	part := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := part(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + part(s.claims())
	mac := hmac.New(sha256.New, []byte(s.secret))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
