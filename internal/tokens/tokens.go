// Package tokens mints the JSON Web Tokens a study's services verify: a
// fresh key for every run, so that no secret and no token is ever
// committed, and no token outlives the run it was made for.
package tokens

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Spec is one token of a study file's tokens:.
type Spec struct {
	Name      string
	Algorithm string // one of Algorithms
	// Claims go into the token as they are; iat and exp are set from
	// Expires when these do not give them.
	Claims  map[string]any
	Expires time.Duration
}

// Algorithms are the signing algorithms a token may use: HMAC with a
// shared secret, or RSA, whose public key the verifying service gets.
var Algorithms = []string{"HS256", "HS384", "HS512", "RS256"}

// Minted is a token with what verifies it.
type Minted struct {
	Token string
	// Secret is the HMAC key, as the ASCII text of 64 random bytes in
	// base64url (what a service reads from its environment is used as
	// the key's bytes); empty for RSA.
	Secret string
	// PublicKey is the RSA public key in PEM (PKIX); empty for HMAC.
	PublicKey string
}

// Values are the placeholders of a minted token, by key: token, secret,
// public_key.
func (m Minted) Values() map[string]string {
	return map[string]string{"token": m.Token, "secret": m.Secret, "public_key": m.PublicKey}
}

// Keys are the placeholder keys of Values.
var Keys = []string{"token", "secret", "public_key"}

// Mint makes a new key and signs a token with it, issued at now.
func Mint(s Spec, now time.Time) (Minted, error) {
	method := jwt.GetSigningMethod(s.Algorithm)
	if method == nil || !slices.Contains(Algorithms, s.Algorithm) {
		return Minted{}, fmt.Errorf("token %s: algorithm %q is not one of %v", s.Name, s.Algorithm, Algorithms)
	}
	claims := jwt.MapClaims{}
	maps.Copy(claims, s.Claims)
	if _, ok := claims["iat"]; !ok {
		claims["iat"] = now.Unix()
	}
	if _, ok := claims["exp"]; !ok && s.Expires > 0 {
		claims["exp"] = now.Add(s.Expires).Unix()
	}
	tok := jwt.NewWithClaims(method, claims)
	var m Minted
	var key any
	if s.Algorithm == "RS256" {
		priv, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return Minted{}, fmt.Errorf("token %s: %w", s.Name, err)
		}
		der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
		if err != nil {
			return Minted{}, fmt.Errorf("token %s: %w", s.Name, err)
		}
		m.PublicKey, key = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), priv
	} else {
		raw := make([]byte, 64)
		if _, err := rand.Read(raw); err != nil {
			return Minted{}, fmt.Errorf("token %s: %w", s.Name, err)
		}
		m.Secret = base64.RawURLEncoding.EncodeToString(raw)
		key = []byte(m.Secret)
	}
	signed, err := tok.SignedString(key)
	if err != nil {
		return Minted{}, fmt.Errorf("token %s: %w", s.Name, err)
	}
	m.Token = signed
	return m, nil
}
