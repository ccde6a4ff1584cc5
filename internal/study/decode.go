package study

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// FieldError locates one mistake in a study file.
type FieldError struct {
	File  string
	Line  int
	Field string // dotted path, e.g. load.steps[2].users
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Line == 0 {
		// A study rebuilt from a run's study.resolved.json, checked
		// against an analysis, knows no lines.
		return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// decoder walks a YAML tree into a study's sections (see decode) so that
// every error can name the file, the line and the field, and so that all
// mistakes are reported at once.
type decoder struct {
	file string
	errs []error
	refs []ref // placeholders seen, checked once every name is known
	// lines are where each field read so far is written, so that a
	// mistake found once the whole file is read (a name referring to
	// nothing) still points at its line.
	lines map[string]int
}

// errorf reports a mistake at n, or, without n, where field is written.
func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	if line == 0 {
		line = d.lineOf(field)
	}
	d.errs = append(d.errs, &FieldError{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// lineOf is the line of field or of its nearest enclosing field read, the
// first line when none is (a field missing from the top of the file).
func (d *decoder) lineOf(field string) int {
	for field != "" {
		if line := d.lines[field]; line > 0 {
			return line
		}
		field = field[:max(strings.LastIndexAny(field, ".["), 0)]
	}
	return 1
}

// at records where field is written.
func (d *decoder) at(field string, n *yaml.Node) {
	if d.lines == nil {
		d.lines = map[string]int{}
	}
	if _, seen := d.lines[field]; !seen {
		d.lines[field] = n.Line
	}
}

func (d *decoder) err() error {
	slices.SortStableFunc(d.errs, func(a, b error) int {
		var fa, fb *FieldError
		if errors.As(a, &fa) && errors.As(b, &fb) {
			return fa.Line - fb.Line
		}
		return 0
	})
	return errors.Join(d.errs...)
}

// entry is one key of a mapping, in file order.
type entry struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// mapping returns a mapping's entries, reporting keys outside allowed (a
// typo must not be silently ignored) and duplicates.
func (d *decoder) mapping(n *yaml.Node, field string, allowed ...string) []entry {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, field, "want a mapping of keys to values, got %s", kindName(n))
		return nil
	}
	var out []entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(field, k.Value)
		switch {
		case seen[k.Value]:
			d.errorf(k, name, "given twice")
			continue
		case allowed != nil && !slices.Contains(allowed, k.Value):
			d.errorf(k, name, "unknown field (known: %s)", strings.Join(allowed, ", "))
			continue
		}
		seen[k.Value] = true
		d.at(name, k)
		out = append(out, entry{key: k.Value, keyN: k, value: v})
	}
	return out
}

func (d *decoder) sequence(n *yaml.Node, field string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, field, "want a list, got %s", kindName(n))
		return nil
	}
	for i, c := range n.Content {
		d.at(fmt.Sprintf("%s[%d]", field, i), c)
	}
	return n.Content
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

// maxExpanded bounds the nodes a study file comes to once its aliases
// are expanded: the larger of this and ten times the nodes it is written
// with. An alias repeats its anchor's block, and aliases of blocks that
// hold aliases multiply ("billion laughs": 600 bytes, billions of nodes).
const maxExpanded = 100_000

// resolveAliases puts the anchored node in place of every alias (*name)
// under doc, so that a study file may share a block (env: &common …, env:
// *common) and every reader sees the block itself. A mistake in a shared
// block is reported at the anchor's line, where it is written. A file that
// would expand beyond its budget, or whose block holds an alias of itself,
// is refused at the alias that crosses it, before anything walks the
// expansion.
func (d *decoder) resolveAliases(doc *yaml.Node) bool {
	written := 0
	countWritten(doc, &written)
	budget := max(maxExpanded, 10*written)
	sizes := map[*yaml.Node]int{}
	total := 0
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		for _, c := range n.Content {
			if c.Kind != yaml.AliasNode {
				total++
				if !walk(c) {
					return false
				}
				continue
			}
			size, ok := expandedSize(c.Alias, sizes, budget)
			if total += size; !ok || total > budget {
				msg := fmt.Sprintf("*%s repeats a block that holds an alias of itself", c.Value)
				if ok {
					msg = fmt.Sprintf("*%s takes the file past %d nodes once its aliases are expanded (an alias repeats its anchor's block, and nested ones multiply)", c.Value, budget)
				}
				d.errorf(c, "(alias)", "%s", msg)
				return false
			}
		}
		return true
	}
	if !walk(doc) {
		return false
	}
	replaceAliases(doc, map[*yaml.Node]bool{})
	return true
}

func countWritten(n *yaml.Node, count *int) {
	*count++
	for _, c := range n.Content {
		countWritten(c, count)
	}
}

// expandedSize counts the nodes n comes to with its aliases expanded,
// each shared node's count computed once, so that counting costs what the
// file is written with; it stops past budget. False: n's block holds an
// alias of itself.
func expandedSize(n *yaml.Node, sizes map[*yaml.Node]int, budget int) (int, bool) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if size, done := sizes[n]; done {
		return size, size >= 0
	}
	sizes[n] = -1 // being counted: meeting it again is a cycle
	size := 1
	for _, c := range n.Content {
		s, ok := expandedSize(c, sizes, budget)
		if !ok {
			return 0, false
		}
		size = min(size+s, budget+1)
	}
	sizes[n] = size
	return size, true
}

// replaceAliases resolves every alias under n, visiting each shared block
// once.
func replaceAliases(n *yaml.Node, done map[*yaml.Node]bool) {
	if done[n] {
		return
	}
	done[n] = true
	for i, c := range n.Content {
		for c.Kind == yaml.AliasNode && c.Alias != nil {
			c = c.Alias
		}
		n.Content[i] = c
		replaceAliases(c, done)
	}
}
