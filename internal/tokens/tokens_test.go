package tokens

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Every algorithm's token verifies with what Mint hands the services, and
// with nothing else; the claims are the spec's, exp and iat from now.
func TestMintVerifies(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			s := Spec{Name: "user", Algorithm: alg, Expires: time.Hour,
				Claims: map[string]any{"sub": "msbench", "authorities": []any{"ROLE_USER"}, "aud": "msbench-frameworks"}}
			m, err := Mint(s, now)
			if err != nil {
				t.Fatal(err)
			}
			key := func(*jwt.Token) (any, error) {
				if m.PublicKey != "" {
					b, _ := pem.Decode([]byte(m.PublicKey))
					return x509.ParsePKIXPublicKey(b.Bytes)
				}
				return []byte(m.Secret), nil
			}
			claims := jwt.MapClaims{}
			if _, err := jwt.ParseWithClaims(m.Token, claims, key, jwt.WithValidMethods([]string{alg}), jwt.WithAudience("msbench-frameworks")); err != nil {
				t.Fatalf("the minted token does not verify: %v", err)
			}
			if claims["sub"] != "msbench" || claims["exp"] != float64(now.Add(time.Hour).Unix()) || claims["iat"] != float64(now.Unix()) {
				t.Errorf("claims %v", claims)
			}
			if a, ok := claims["authorities"].([]any); !ok || len(a) != 1 || a[0] != "ROLE_USER" {
				t.Errorf("authorities %v", claims["authorities"])
			}
			if (m.Secret == "") == (m.PublicKey == "") {
				t.Errorf("secret %q and public key %q: want exactly one", m.Secret, m.PublicKey)
			}
			// Another run's key does not verify this run's token.
			other, err := Mint(s, now)
			if err != nil {
				t.Fatal(err)
			}
			if other.Secret+other.PublicKey == m.Secret+m.PublicKey {
				t.Fatal("two mints share a key")
			}
			if _, err := jwt.Parse(m.Token, func(*jwt.Token) (any, error) {
				if other.PublicKey != "" {
					b, _ := pem.Decode([]byte(other.PublicKey))
					return x509.ParsePKIXPublicKey(b.Bytes)
				}
				return []byte(other.Secret), nil
			}); err == nil {
				t.Fatal("a token verified with another mint's key")
			}
		})
	}
}

func TestMintRefusesUnknownAlgorithm(t *testing.T) {
	for _, alg := range []string{"none", "HS1", "ES256", ""} {
		if _, err := Mint(Spec{Name: "x", Algorithm: alg}, time.Now()); err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("%q: %v", alg, err)
		}
	}
}

// The secret is ASCII text of at least 32 characters, as services that
// read it from their environment need.
func TestSecretIsText(t *testing.T) {
	m, err := Mint(Spec{Name: "x", Algorithm: "HS256"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Secret) < 32 || strings.ContainsAny(m.Secret, " +/=\n") {
		t.Fatalf("secret %q", m.Secret)
	}
}
