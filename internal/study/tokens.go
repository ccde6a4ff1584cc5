package study

import (
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/msbench/msbench/internal/tokens"
)

// elementName keeps a token's or a dataset's name one element of a
// placeholder ({tokens.NAME.KEY}, {dataset.NAME}).
var elementName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// tokens reads the tokens: field: JSON Web Tokens msbench mints with a
// fresh key for every run, for services to verify and the load to send:
//
//	tokens:
//	  user:
//	    algorithm: HS256
//	    expires: 8760h
//	    claims: {sub: msbench, authorities: [ROLE_USER], aud: lab}
//
// {tokens.user.token} is the token; {tokens.user.secret} the HMAC key
// (HS*), {tokens.user.public_key} the RSA public key in PEM (RS256).
func (d *decoder) tokens(n *yaml.Node) []tokens.Spec {
	var out []tokens.Spec
	for _, e := range d.mapping(n, "tokens") {
		f := join("tokens", e.key)
		if !elementName.MatchString(e.key) {
			d.errorf(e.keyN, f, "a token's name is lower-case letters, digits and dashes, starting with a letter")
		}
		s := tokens.Spec{Name: e.key}
		for _, te := range d.mapping(e.value, f, "algorithm", "expires", "claims") {
			tf := join(f, te.key)
			switch te.key {
			case "algorithm":
				s.Algorithm = d.oneOf(te.value, tf, tokens.Algorithms...)
			case "expires":
				s.Expires = d.duration(te.value, tf)
			case "claims":
				s.Claims = d.claims(te.value, tf)
			}
		}
		if s.Algorithm == "" {
			d.errorf(e.value, f, "missing algorithm: one of %s", strings.Join(tokens.Algorithms, ", "))
		}
		out = append(out, s)
	}
	return out
}

// claims reads a token's claims: names to strings, numbers, booleans or
// lists of them, as JSON carries them.
func (d *decoder) claims(n *yaml.Node, field string) map[string]any {
	out := map[string]any{}
	for _, e := range d.mapping(n, field) {
		f := join(field, e.key)
		scalar := func(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag != "!!null" }
		if e.value.Kind == yaml.SequenceNode && !slices.ContainsFunc(e.value.Content, func(v *yaml.Node) bool { return !scalar(v) }) || scalar(e.value) {
			var v any
			if err := e.value.Decode(&v); err != nil {
				d.errorf(e.value, f, "%v", err)
				continue
			}
			out[e.key] = v
			continue
		}
		d.errorf(e.value, f, "want a string, number, boolean or a list of them")
	}
	return out
}
