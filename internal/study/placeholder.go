package study

import (
	"fmt"
	"slices"
	"strings"

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

// reserved names cannot be axis names.
var reserved = map[string]bool{"port": true, "addr": true, "host": true, "replica": true, "tmp": true, "out": true, "build": true, "service": true, "dep": true, "setup": true, "tokens": true, "dataset": true, "root": true, "data": true}

func reservedList() string {
	var names []string
	for k := range reserved {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// depKeys are the values every dependency offers (deps.Instance.Values).
var depKeys = []string{"addr", "host", "port", "url", "user", "password", "database", "dsn"}

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

// placeholdersIn records the placeholders of every scalar below n.
func (d *decoder) placeholdersIn(n *yaml.Node, field string) {
	if n.Kind == yaml.ScalarNode {
		d.placeholders(n, field, n.Value)
	}
	for _, c := range n.Content {
		d.placeholdersIn(c, field)
	}
}

func (d *decoder) checkPlaceholders(s *Study) {
	for _, r := range d.refs {
		msg := s.unknownPlaceholder(r.name, strings.HasPrefix(r.field, "builds."))
		if msg == "" && strings.HasPrefix(r.field, "variants.") {
			msg = lateInAttribute(r)
		}
		if msg != "" {
			d.errorf(&yaml.Node{Line: r.line}, r.field, "{%s}: %s", r.name, msg)
		}
	}
}

// instanceKeys are the placeholders each instance of a service has its own
// value of, known only as it starts.
var instanceKeys = []string{"port", "addr", "host", "replica", "tmp"}

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

func (s *Study) unknownPlaceholder(name string, inBuild bool) string {
	parts := strings.Split(name, ".")
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
	case len(parts) == 1 && reserved[name]:
		return ""
	case parts[0] == "build":
		if len(parts) != 2 || s.Build(parts[1]) == nil {
			return "no such build"
		}
		return ""
	case parts[0] == "service":
		if len(parts) != 3 || s.Service(parts[1]) == nil || !slices.Contains([]string{"addr", "addrs", "port"}, parts[2]) {
			return "want {service.NAME.addr}, {service.NAME.addrs} or {service.NAME.port} of a declared service"
		}
		return ""
	case parts[0] == "setup":
		if len(parts) == 3 && slices.ContainsFunc(s.Setup, func(t *Target) bool {
			return t.Name == parts[1] && slices.ContainsFunc(t.Capture, func(kv [2]string) bool { return kv[0] == parts[2] })
		}) {
			return ""
		}
		return "want {setup.NAME.KEY} of a setup request that captures KEY"
	case parts[0] == "tokens":
		if len(parts) == 3 && slices.Contains(tokens.Keys, parts[2]) && slices.ContainsFunc(s.Tokens, func(t tokens.Spec) bool { return t.Name == parts[1] }) {
			return ""
		}
		return "want {tokens.NAME.KEY} of a declared token, KEY one of " + strings.Join(tokens.Keys, ", ")
	case parts[0] == "dataset":
		if len(parts) != 2 || s.Dataset(parts[1]) == nil {
			return "want {dataset.NAME} of a declared dataset"
		}
		return ""
	case parts[0] == "dep":
		if len(parts) != 3 || s.Dependency(parts[1]) == nil || !slices.Contains(depKeys, parts[2]) {
			return "want {dep.NAME.KEY} of a declared dependency, KEY one of " + strings.Join(depKeys, ", ")
		}
		return ""
	case len(parts) == 1 && slices.ContainsFunc(s.Variants, func(a Axis) bool { return a.Name == name }):
		return ""
	case len(parts) == 2 && slices.ContainsFunc(s.Variants, func(a Axis) bool { return a.Name == parts[0] && len(a.Values) > 0 && hasAttr(a, parts[1]) }):
		return ""
	}
	return "unknown placeholder (see the study file documentation)"
}

func hasAttr(a Axis, attr string) bool {
	_, ok := a.Attrs[a.Values[0]][attr]
	return ok
}
