package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/tokens"
	"gopkg.in/yaml.v3"
)

// Placeholders in braces are filled in when a service starts, so that no
// study hard-codes a port or a path:
//
//	{port} {addr} {host}      this service instance's loopback port and address
//	{replica}                 this instance's index, from 0
//	{tmp}                     a private temporary directory of this instance
//	{out}                     (build commands) the artifact directory
//	{build.NAME}              a build's artifact directory
//	{service.NAME.addr}       another service's address (first replica);
//	{service.NAME.addrs}      all replicas' addresses, comma-separated;
//	{service.NAME.port}       and its port
//	{dep.NAME.KEY}            a dependency's addr, host, port, url, user,
//	                          password, database (and dsn for MariaDB)
//	{root} {data}             the repository root; the shared data directory
//	{dataset.NAME}            a dataset's file: the shared one, or its stand-in
//	{setup.NAME.KEY}          a value captured from the answer to setup request NAME
//	{tokens.NAME.KEY}         a minted token (KEY token) and what verifies it
//	                          (secret for HS*, public_key for RS256)
//	{AXIS}                    the variant's value on that axis, e.g. {framework}
//	{AXIS.ATTR}               an attribute of that value (axes given as mappings)

// placeholderForms are the placeholders with a prefix, each declared by a
// section of the study (see provided), and how they are written, for the
// message when a name is none of those declared.
var placeholderForms = map[string]string{
	"build":   "no such build",
	"service": "want {service.NAME.addr}, {service.NAME.addrs} or {service.NAME.port} of a declared service",
	"dep":     "want {dep.NAME.KEY} of a declared dependency, KEY one its kind offers (" + depKeyList() + ")",
	"setup":   "want {setup.NAME.KEY} of a setup request that captures KEY",
	"tokens":  "want {tokens.NAME.KEY} of a declared token, KEY one of " + strings.Join(tokens.Keys, ", "),
	"dataset": "want {dataset.NAME} of a declared dataset",
}

// instanceKeys are the placeholders each instance of a service has its own
// value of, known only as it starts.
var instanceKeys = []string{"port", "addr", "host", "replica", "tmp"}

// reserved names cannot be axis names: an axis is a placeholder too.
var reserved = func() map[string]bool {
	out := map[string]bool{"out": true, "root": true, "data": true}
	for _, k := range append(slices.Collect(maps.Keys(placeholderForms)), instanceKeys...) {
		out[k] = true
	}
	return out
}()

func reservedList() string {
	return strings.Join(slices.Sorted(maps.Keys(reserved)), ", ")
}

// depKeyList says which values each kind of dependency offers.
func depKeyList() string {
	var kinds []string
	for _, k := range deps.Kinds() {
		keys, _ := deps.Keys(k) // a kind of the list has keys
		kinds = append(kinds, string(k)+": "+strings.Join(keys, ", "))
	}
	return strings.Join(kinds, "; ")
}

// The placeholders each part of a study provides.

func (b *Build) placeholders() []string { return []string{"build." + b.Name} }

func (svc *Service) placeholders() []string {
	return prefixed("service."+svc.Name+".", []string{"addr", "addrs", "port"})
}

// placeholders of a dependency are its kind's values; one of an unknown
// kind (an error of its own) has none.
func (dep *Dependency) placeholders() []string {
	keys, _ := deps.Keys(deps.Kind(dep.Kind))
	return prefixed("dep."+dep.Name+".", keys)
}

// placeholders of a setup request are the values it captures.
func (t *Target) placeholders() []string {
	var out []string
	for _, kv := range t.Capture {
		out = append(out, "setup."+t.Name+"."+kv[0])
	}
	return out
}

func tokenPlaceholders(t tokens.Spec) []string { return prefixed("tokens."+t.Name+".", tokens.Keys) }

func (ds *Dataset) placeholders() []string { return []string{"dataset." + ds.Name} }

// placeholders of an axis are its value, {AXIS}, and its attributes.
func (ax *Axis) placeholders() []string {
	out := []string{ax.Name}
	if len(ax.Values) > 0 {
		for attr := range ax.Attrs[ax.Values[0]] {
			out = append(out, ax.Name+"."+attr)
		}
	}
	return out
}

func prefixed(prefix string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = prefix + k
	}
	return out
}

// provided is every placeholder the study's parts declare.
func (s *Study) provided() map[string]bool {
	var names [][]string
	for _, b := range s.Builds {
		names = append(names, b.placeholders())
	}
	for _, svc := range s.Services {
		names = append(names, svc.placeholders())
	}
	for _, dep := range s.Deps {
		names = append(names, dep.placeholders())
	}
	for _, t := range s.Setup {
		names = append(names, t.placeholders())
	}
	for _, t := range s.Tokens {
		names = append(names, tokenPlaceholders(t))
	}
	for i := range s.Datasets {
		names = append(names, s.Datasets[i].placeholders())
	}
	for i := range s.Variants {
		names = append(names, s.Variants[i].placeholders())
	}
	out := map[string]bool{}
	for _, name := range slices.Concat(names...) {
		out[name] = true
	}
	return out
}

type ref struct {
	line  int
	field string
	name  string
}

func (d *decoder) placeholders(n *yaml.Node, field, text string) {
	for _, m := range placeholder.Pattern.FindAllStringSubmatch(text, -1) {
		d.refs = append(d.refs, ref{line: n.Line, field: field, name: m[1]})
	}
}

func (d *decoder) checkPlaceholders(s *Study) {
	provided := s.provided()
	for _, r := range d.refs {
		msg := unknownPlaceholder(provided, r.name, strings.HasPrefix(r.field, "builds."))
		if msg == "" && strings.HasPrefix(r.field, "variants.") {
			msg = lateInAttribute(r)
		}
		if msg != "" {
			d.errorf(&yaml.Node{Line: r.line}, r.field, "{%s}: %s", r.name, msg)
		}
	}
}

// lateInAttribute explains why an axis attribute cannot hold a placeholder
// that is filled in after a variant's values are (which is once per
// deployment, before any service starts), or returns "".
func lateInAttribute(r ref) string {
	// r.field is variants.AXIS.VALUE.ATTR; a value may hold dots, an axis
	// or an attribute's name none.
	axis, attr := strings.Split(r.field, ".")[1], r.field[strings.LastIndex(r.field, ".")+1:]
	use := "{" + axis + "." + attr + "}"
	switch {
	case slices.Contains(instanceKeys, r.name):
		return fmt.Sprintf("each instance's own, unknown when a variant's values are filled in (before any service starts): write it where the value is used, beside it, e.g. command: \"%s --port {%s}\"", use, r.name)
	case strings.HasPrefix(r.name, "setup."):
		return fmt.Sprintf("captured after the services start, later than a variant's values are filled in: write it where %s is used instead", use)
	}
	return ""
}

// unknownPlaceholder explains why name is none of the placeholders known
// where it is written, or returns "".
func unknownPlaceholder(provided map[string]bool, name string, inBuild bool) string {
	switch {
	case name == "out":
		if !inBuild {
			return "{out} exists only in build commands"
		}
		return ""
	case name == "root" || name == "data":
		return ""
	case inBuild:
		return "build commands know only {out}, {root} and {data}"
	case slices.Contains(instanceKeys, name) || provided[name]:
		return ""
	}
	if msg, ok := placeholderForms[strings.Split(name, ".")[0]]; ok {
		return msg
	}
	return "unknown placeholder (see the study file documentation)"
}
