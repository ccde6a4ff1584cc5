package study

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/msbench/msbench/internal/placeholder"
	"gopkg.in/yaml.v3"
)

// Find resolves a study name (a folder dir/NAME holding study.yaml) or a
// path to a study file.
func Find(dir, nameOrFile string) (string, error) {
	if strings.ContainsAny(nameOrFile, "/.") {
		if _, err := os.Stat(nameOrFile); err != nil {
			return "", fmt.Errorf("study file: %w", err)
		}
		return nameOrFile, nil
	}
	p := filepath.Join(dir, nameOrFile, FileName)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	known, err := List(dir)
	if err != nil {
		return "", err
	}
	return "", fmt.Errorf("no study %q in %s (known: %s)", nameOrFile, dir, strings.Join(known, ", "))
}

// FileName is the study file in a study's folder.
const FileName = "study.yaml"

// List names the studies in dir: its folders that hold a study file,
// sorted. Adding a study is adding such a folder.
func List(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", FileName))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(filepath.Dir(f))
	}
	return names, nil
}

// MaxFileSize bounds a study file: the largest shipped is a few KiB, and
// a file read whole must not take the machine's memory.
const MaxFileSize = 1 << 20

// Load reads a study file and applies the named profile ("" for none).
func Load(path, profile string) (*Study, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, profile)
}

// readBounded reads a regular file, no more of it than Parse takes. It
// opens without blocking, so that a FIFO is refused rather than waited on.
func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read study: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read study: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read study: %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read study: %w", err)
	}
	return data, nil
}

var (
	yamlLine   = regexp.MustCompile(`line (\d+)`)
	yamlAnchor = regexp.MustCompile(`unknown anchor '([^']*)'`)
)

// syntaxLine finds the line of a YAML syntax error: the parser names it in
// most messages, and the rest say what to look for.
func syntaxLine(data []byte, err error) int {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line
	}
	at := -1
	if m := yamlAnchor.FindStringSubmatch(msg); m != nil {
		at = bytes.Index(data, []byte("*"+m[1]))
	} else if strings.Contains(msg, "control characters") {
		at = bytes.IndexFunc(data, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' })
	}
	return 1 + bytes.Count(data[:max(at, 0)], []byte("\n"))
}

// Parse reads a study from data; file names it in errors.
func Parse(file string, data []byte, profile string) (*Study, error) {
	if len(data) > MaxFileSize {
		return nil, &FieldError{File: file, Line: 1, Field: "(file)", Msg: fmt.Sprintf("over %d bytes: a study file is at most %d KiB", MaxFileSize, MaxFileSize>>10)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &FieldError{File: file, Line: syntaxLine(data, err), Field: "(syntax)", Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	d := &decoder{file: file}
	if len(root.Content) == 0 {
		d.errorf(&root, "(file)", "empty study file")
		return nil, d.err()
	}
	doc := root.Content[0]
	if !d.resolveAliases(doc) {
		return nil, d.err()
	}
	var f fileSection
	d.decode(doc, "", reflect.ValueOf(&f).Elem())
	s, drafts := f.study(d, file)
	if len(d.errs) == 0 {
		aa, aaField := f.AA, "aa"
		baseline, baselineField := f.Baseline, "baseline"
		if p := d.applyProfile(s, f.Profiles, drafts, profile); p != nil {
			if p.AA != nil {
				aa, aaField = p.AA, join(join("profiles", s.Profile), "aa")
			}
			if p.Baseline != nil {
				baseline, baselineField = p.Baseline, join(join("profiles", s.Profile), "baseline")
			}
		}
		s.AA = d.chooseVariant(s, aa, aaField, AANone)
		s.Baseline = d.chooseVariant(s, baseline, baselineField, "")
	}
	if len(d.errs) == 0 {
		d.check(s)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	if profile == "" {
		// A profile nobody ran today must not hide a mistake until the day
		// somebody does.
		for _, p := range s.Profiles {
			if _, err := Parse(file, data, p); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

var axisName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// fileNamePattern is what a name that becomes a file or directory name of
// a run may be (a step's, an axis value's, a service's, a dependency's, a
// build's): one path element, which no ".." or slash takes out of its
// directory, and no markup for a report to carry.
var fileNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// fileName reports a name that fileNamePattern refuses, or that holds "..".
func (d *decoder) fileName(n *yaml.Node, field, what, name string) {
	if !fileNamePattern.MatchString(name) || strings.Contains(name, "..") {
		d.errorf(n, field, "%q: %s, so it is letters, digits, '.', '_' and '-', starting with a letter or digit, without '..', at most 64 of them", name, what)
	}
}

// axes are the variants: field, each axis a list of values or a mapping
// of values to their attributes.
type axes []Axis

func (out *axes) decodeNode(d *decoder, n *yaml.Node, _ string) {
	variants := 1
	for _, e := range d.mapping(n, "variants") {
		f := join("variants", e.key)
		if !axisName.MatchString(e.key) || reserved[e.key] {
			d.errorf(e.keyN, f, "an axis name is lower case letters, digits and _, and not one of the placeholders %s", reservedList())
		}
		ax := Axis{Name: e.key}
		if e.value.Kind == yaml.MappingNode {
			d.axisWithAttrs(&ax, e.value, f)
		} else {
			d.decode(e.value, f, reflect.ValueOf(&ax.Values).Elem())
		}
		if len(ax.Values) == 0 {
			d.errorf(e.value, f, "an axis needs at least one value")
		}
		if variants *= max(len(ax.Values), 1); variants > maxExpansion {
			d.errorf(e.value, f, "the axes so far make %d variants, over the %d one study can run; split the study or use a profile's variants: to run a subset", variants, maxExpansion)
			return
		}
		for i, v := range ax.Values {
			vf := fmt.Sprintf("%s[%d]", f, i)
			if ax.Attrs != nil {
				vf = join(f, v)
			}
			d.fileName(nil, vf, "a value names directories (and @ marks an A/A twin)", v)
			if slices.Index(ax.Values, v) != i {
				d.errorf(nil, vf, "%q given twice", v)
			}
		}
		*out = append(*out, ax)
	}
}

// axisWithAttrs reads an axis whose values carry attributes:
//
//	impl:
//	  gin: {command: "{build.gin}/server"}
//	  spring: {command: "{build.spring}/run.sh"}
//
// Every value must give the same attributes, so that a placeholder
// {impl.command} means something in every variant.
func (d *decoder) axisWithAttrs(ax *Axis, n *yaml.Node, field string) {
	ax.Attrs = map[string]map[string]string{}
	var first []string
	for i, e := range d.mapping(n, field) {
		f := join(field, e.key)
		ax.Values = append(ax.Values, e.key)
		var given templatePairs
		given.decodeNode(d, e.value, f)
		attrs := map[string]string{}
		var names []string
		for _, kv := range given {
			attrs[kv[0]] = kv[1]
			names = append(names, kv[0])
		}
		slices.Sort(names)
		if i == 0 {
			first = names
		} else if !slices.Equal(first, names) {
			d.errorf(e.keyN, f, "attributes %v differ from the first value's %v: every value of an axis gives the same ones", names, first)
		}
		ax.Attrs[e.key] = attrs
	}
}

// steps reads load.steps: each template expanded by its each: loop.
func (d *decoder) steps(nodes []yaml.Node) []stepDraft {
	var out []stepDraft
	for i := range nodes {
		sn := &nodes[i]
		sf := fmt.Sprintf("load.steps[%d]", i)
		for _, one := range d.each(sn, sf) {
			dr := stepDraft{vars: one.vars, line: sn.Line}
			d.decode(one.node, sf, reflect.ValueOf(&dr.section).Elem())
			for k := range one.vars {
				if _, dup := dr.section.Params[k]; dup {
					d.errorf(sn, join(sf, "params."+k), "also a name of each:; give the value once")
				}
			}
			out = append(out, dr)
		}
	}
	return out
}

// each expands a step template over the combinations of its each: lists,
// replacing {VAR} in every text of the step:
//
//   - name: post-{format}-{size}
//     each: {format: [png, jpg], size: [17k, 30k]}
//     targets: [{method: POST, path: /images, form: {image: "@{build.corpus}/{format}-{size}.{format}"}}]
//
// A step without each is returned as it is.
func (d *decoder) each(n *yaml.Node, field string) []expanded {
	if n.Kind != yaml.MappingNode {
		return []expanded{{node: n}}
	}
	var loops *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "each" {
			loops = n.Content[i+1]
		}
	}
	if loops == nil {
		return []expanded{{node: n}}
	}
	combos := []map[string]string{{}}
	for _, e := range d.mapping(loops, join(field, "each")) {
		if !axisName.MatchString(e.key) || reserved[e.key] {
			d.errorf(e.keyN, join(field, "each."+e.key), "a loop name is lower case letters, digits and _, and not a placeholder name")
		}
		var vals []string
		d.decode(e.value, join(field, "each."+e.key), reflect.ValueOf(&vals).Elem())
		if len(combos)*len(vals) > maxExpansion {
			d.errorf(e.value, join(field, "each."+e.key), "the loops so far make %d steps from one template, over the %d allowed; split the template", len(combos)*len(vals), maxExpansion)
			return nil
		}
		var next []map[string]string
		for _, c := range combos {
			for _, v := range vals {
				m := maps.Clone(c)
				m[e.key] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	out := make([]expanded, 0, len(combos))
	for _, c := range combos {
		out = append(out, expanded{node: substitute(n, c), vars: c})
	}
	return out
}

// maxExpansion bounds what one study file can multiply into, variants or
// steps from one each: template: a 1 MiB file of lists would otherwise
// name more than memory holds, and no study measures that many.
const maxExpansion = 10000

// expanded is one instance of a template and the each: values it took.
type expanded struct {
	node *yaml.Node
	vars map[string]string
}

// substitute deep-copies n, replacing {VAR} of vars in every scalar.
func substitute(n *yaml.Node, vars map[string]string) *yaml.Node {
	c := *n
	if n.Kind == yaml.ScalarNode {
		c.Value = placeholder.Pattern.ReplaceAllStringFunc(n.Value, func(m string) string {
			if v, ok := vars[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = substitute(child, vars)
	}
	return &c
}

// AANone turns the A/A twin off in a study file: aa: none.
const AANone = "none"

// chooseVariant is the key of the variant the field n names (aa:,
// baseline:), chosen once the profile has chosen the variants so that it
// is one of those that run: the first variant when n is nil, "" when n
// says none (a word only some fields take; "" for none of them).
func (d *decoder) chooseVariant(s *Study, n *yaml.Node, field, none string) string {
	matrix := s.Matrix()
	if len(matrix) == 0 {
		return ""
	}
	if n == nil {
		return matrix[0].Key()
	}
	var given nonEmpty
	if err := given.UnmarshalYAML(n); err != nil {
		d.errorf(n, field, "%v", err)
		return ""
	}
	key := string(given)
	if none != "" && key == none {
		return ""
	}
	known := Keys(matrix)
	if slices.Contains(known, key) {
		return key
	}
	where := "a variant key of the matrix"
	if s.Profile != "" {
		where = "a variant key of profile " + s.Profile
		if !strings.HasPrefix(field, "profiles.") {
			where += fmt.Sprintf(" (give profiles.%s.%s)", s.Profile, field)
		}
	}
	if none != "" {
		known = append(known, "or "+none)
	}
	d.errorf(n, field, "%q is not %s (known: %s)", key, where, strings.Join(known, ", "))
	return ""
}

// applyProfile overlays the named profile: repetitions, a subset of the
// variants, overrides of steps, then skips, so that a glob such as
// "steady-*" may cover steps another line skips. It returns the profile,
// nil for none.
func (d *decoder) applyProfile(s *Study, profiles byName[profileSection], drafts []stepDraft, name string) *profileSection {
	if name == "" {
		return nil
	}
	i := slices.IndexFunc(profiles, func(p named[profileSection]) bool { return p.name == name })
	if i < 0 {
		d.errorf(nil, "profiles", "no profile %q (profiles: %s)", name, strings.Join(s.Profiles, ", "))
		return nil
	}
	p, f := &profiles[i].value, join("profiles", name)
	s.Profile = name
	if p.Repetitions > 0 {
		s.Repetitions = int(p.Repetitions)
	}
	d.subsetVariants(s, p.Variants, join(f, "variants"))
	if p.Only != nil {
		d.keepOnly(s, p.Only, join(f, "only"))
	}
	d.overrideSteps(s, drafts, p.Steps, join(f, "steps"))
	if p.Skip != nil {
		d.skipSteps(s, p.Skip, join(f, "skip"))
	}
	return p
}

func (d *decoder) subsetVariants(s *Study, subsets byName[[]string], field string) {
	for _, e := range subsets {
		f := join(field, e.name)
		i := slices.IndexFunc(s.Variants, func(a Axis) bool { return a.Name == e.name })
		if i < 0 {
			d.errorf(e.key, f, "no such axis in variants")
			continue
		}
		for _, v := range e.value {
			if !slices.Contains(s.Variants[i].Values, v) {
				d.errorf(e.key, f, "%q is not a value of axis %s", v, e.name)
			}
		}
		if s.Variants[i].declared == nil {
			s.Variants[i].declared = s.Variants[i].Values
		}
		s.Variants[i].Values = e.value
	}
}

// keepOnly narrows the matrix to the variants with the given keys, each
// named once and kept by the profile's variants: too.
func (d *decoder) keepOnly(s *Study, keys []string, field string) {
	known := Keys(s.Matrix())
	for i, k := range keys {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !slices.Contains(known, k):
			d.errorf(nil, f, "%q is not the key of a variant the profile keeps (known: %s)", k, strings.Join(known, ", "))
		case slices.Index(keys, k) < i:
			d.errorf(nil, f, "%q is named twice", k)
		}
	}
	if len(keys) == 0 {
		d.errorf(nil, field, "keeps no variant")
		return
	}
	s.Only = keys
}

// overrideSteps applies overrides keyed by step name or glob ("post-*"),
// in file order: each is decoded onto a copy of the section of every step
// it matches, which is then the step.
func (d *decoder) overrideSteps(s *Study, drafts []stepDraft, overrides byName[yaml.Node], field string) {
	for _, o := range overrides {
		matched := false
		for i := range drafts {
			if ok, _ := path.Match(o.name, string(drafts[i].section.Name)); !ok {
				continue
			}
			matched = true
			overridden := drafts[i]
			d.decode(&o.value, join(field, o.name), reflect.ValueOf(&overridden.section).Elem())
			drafts[i], s.Load.Steps[i] = overridden, overridden.step()
		}
		if !matched {
			d.errorf(o.key, join(field, o.name), "no step of that name in load.steps")
		}
	}
}

// skipSteps drops the steps whose names match any of the globs.
func (d *decoder) skipSteps(s *Study, globs []string, field string) {
	for i, pattern := range globs {
		before := len(s.Load.Steps)
		s.Load.Steps = slices.DeleteFunc(s.Load.Steps, func(st *Step) bool {
			ok, _ := path.Match(pattern, st.Name)
			return ok
		})
		if len(s.Load.Steps) == before {
			d.errorf(nil, fmt.Sprintf("%s[%d]", field, i), "%q matches no step", pattern)
		}
	}
	if len(s.Load.Steps) == 0 {
		d.errorf(nil, field, "skips every step")
	}
}
