package study

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/msbench/msbench/internal/links"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
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
	s := &Study{File: file, Repetitions: 1}
	// What Check says of a missing variants: or load: points at the top.
	s.lines.variants, s.lines.load = doc.Line, doc.Line
	var profiles, aa *yaml.Node
	present := map[string]bool{}
	for _, e := range d.mapping(doc, "", "study", "title", "source", "builds", "dependencies", "services", "variants", "aa", "setup", "load", "repetitions", "profiles", "placement", "links", "hosts", "tokens", "datasets") {
		present[e.key] = true
		switch e.key {
		case "aa":
			aa = e.value
		case "study":
			if s.Name = d.nonEmpty(e.value, "study"); s.Name != "" {
				d.fileName(e.value, "study", "a study's name names its run directories", s.Name)
			}
		case "title":
			s.Title = d.str(e.value, "title")
		case "source":
			s.Source = d.str(e.value, "source")
		case "builds":
			s.Builds = d.builds(e.value)
		case "dependencies":
			s.Deps = d.dependencies(e.value)
		case "services":
			s.Services = d.services(e.value)
		case "variants":
			s.Variants = d.axes(e.value)
			s.lines.variants = e.keyN.Line
		case "setup":
			for i, tn := range d.sequence(e.value, "setup") {
				f := fmt.Sprintf("setup[%d]", i)
				for _, one := range d.each(tn, f) {
					s.Setup = append(s.Setup, d.target(one.node, f, setupTarget))
				}
			}
		case "load":
			s.Load = d.load(e.value)
			s.lines.load = e.keyN.Line
		case "repetitions":
			s.Repetitions = int(d.integer(e.value, "repetitions", 1))
		case "profiles":
			profiles = e.value
		case "placement":
			s.Placement = d.placement(e.value)
		case "links":
			s.Links = d.links(e.value)
		case "hosts":
			s.Hosts = d.hosts(e.value)
		case "tokens":
			s.Tokens = d.tokens(e.value)
		case "datasets":
			s.Datasets = d.datasets(e.value)
		}
	}
	for _, req := range []string{"study", "services", "load"} {
		if !present[req] {
			d.errorf(doc, req, "missing: a study needs study, services and load")
		}
	}
	if len(d.errs) == 0 {
		if paa := d.applyProfile(s, profiles, profile); paa != nil {
			d.chooseAA(s, paa, join(join("profiles", s.Profile), "aa"))
		} else {
			d.chooseAA(s, aa, "aa")
		}
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

func (d *decoder) builds(n *yaml.Node) []*Build {
	var out []*Build
	for _, e := range d.mapping(n, "builds") {
		f := join("builds", e.key)
		d.fileName(e.keyN, f, "a build's name becomes a file name", e.key)
		b := &Build{Name: e.key}
		for _, be := range d.mapping(e.value, f, "dir", "command", "ignore") {
			bf := join(f, be.key)
			switch be.key {
			case "dir":
				b.Dir = d.nonEmpty(be.value, bf)
				if filepath.IsAbs(b.Dir) || strings.HasPrefix(filepath.Clean(b.Dir), "..") {
					d.errorf(be.value, bf, "must be a path inside the repository")
				}
			case "command":
				b.Command = d.nonEmpty(be.value, bf)
				d.placeholders(be.value, bf, b.Command)
			case "ignore":
				b.Ignore = d.strs(be.value, bf)
			}
		}
		if b.Dir == "" || b.Command == "" {
			d.errorf(e.value, f, "a build needs dir and command")
		}
		out = append(out, b)
	}
	return out
}

func (d *decoder) dependencies(n *yaml.Node) []*Dependency {
	var out []*Dependency
	for _, e := range d.mapping(n, "dependencies") {
		f := join("dependencies", e.key)
		d.fileName(e.keyN, f, "a dependency's name becomes a file name", e.key)
		dep := &Dependency{Name: e.key}
		for _, de := range d.mapping(e.value, f, "kind", "limits") {
			switch de.key {
			case "kind":
				dep.Kind = d.nonEmpty(de.value, join(f, "kind"))
				if dep.Kind != "" && !slices.Contains(DependencyKinds, dep.Kind) {
					d.errorf(de.value, join(f, "kind"), "unknown kind %q (known: %s)", dep.Kind, strings.Join(DependencyKinds, ", "))
				}
			case "limits":
				dep.Limits = d.limits(de.value, join(f, "limits"))
			}
		}
		if dep.Kind == "" {
			d.errorf(e.value, f, "a dependency needs a kind")
		}
		out = append(out, dep)
	}
	return out
}

func (d *decoder) services(n *yaml.Node) []*Service {
	var out []*Service
	for _, e := range d.mapping(n, "services") {
		f := join("services", e.key)
		d.fileName(e.keyN, f, "a service's name becomes a file name", e.key)
		svc := &Service{Name: e.key, Replicas: 1, Ready: Ready{Timeout: 60 * time.Second}}
		for _, se := range d.mapping(e.value, f, "build", "command", "dir", "env", "after", "ready", "replicas", "limits", "user", "when") {
			sf := join(f, se.key)
			switch se.key {
			case "build":
				svc.Build = d.nonEmpty(se.value, sf)
			case "command":
				svc.Command = d.nonEmpty(se.value, sf)
				d.placeholders(se.value, sf, svc.Command)
			case "dir":
				svc.Dir = d.nonEmpty(se.value, sf)
			case "env":
				svc.Env = d.pairs(se.value, sf)
				for i, kv := range svc.Env {
					d.placeholders(se.value.Content[2*i+1], join(sf, kv[0]), kv[1])
				}
			case "after":
				svc.After = d.strs(se.value, sf)
			case "ready":
				svc.Ready = d.ready(se.value, sf)
			case "replicas":
				if m := placeholder.Pattern.FindStringSubmatch(se.value.Value); m != nil && m[0] == se.value.Value {
					svc.ReplicasFrom = m[1]
				} else {
					svc.Replicas = int(d.integer(se.value, sf, 1))
				}
			case "limits":
				svc.Limits = d.limits(se.value, sf)
			case "user":
				svc.User = d.nonEmpty(se.value, sf)
			case "when":
				svc.When = map[string][]string{}
				for _, we := range d.mapping(se.value, sf) {
					svc.When[we.key] = d.strs(we.value, join(sf, we.key))
				}
			}
		}
		if svc.Command == "" {
			d.errorf(e.value, f, "a service needs a command")
		}
		out = append(out, svc)
	}
	if n.Kind == yaml.MappingNode && len(out) == 0 {
		d.errorf(n, "services", "no service")
	}
	return out
}

func (d *decoder) ready(n *yaml.Node, field string) Ready {
	r := Ready{Timeout: 60 * time.Second}
	for _, e := range d.mapping(n, field, "http", "tcp", "timeout") {
		f := join(field, e.key)
		switch e.key {
		case "http":
			r.HTTP = d.nonEmpty(e.value, f)
			d.placeholders(e.value, f, r.HTTP)
		case "tcp":
			r.TCP = d.nonEmpty(e.value, f)
			d.placeholders(e.value, f, r.TCP)
		case "timeout":
			r.Timeout = d.duration(e.value, f)
		}
	}
	if (r.HTTP == "") == (r.TCP == "") {
		d.errorf(n, field, "give exactly one of http or tcp")
	}
	return r
}

func (d *decoder) limits(n *yaml.Node, field string) Limits {
	var l Limits
	for _, e := range d.mapping(n, field, "cpus", "memory") {
		f := join(field, e.key)
		switch e.key {
		case "cpus":
			l.CPUs = d.number(e.value, f, 0.01)
		case "memory":
			l.MemoryBytes = d.bytesSize(e.value, f)
		}
	}
	return l
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

func (d *decoder) axes(n *yaml.Node) []Axis {
	var out []Axis
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
			ax.Values = d.strs(e.value, f)
		}
		if len(ax.Values) == 0 {
			d.errorf(e.value, f, "an axis needs at least one value")
		}
		if variants *= max(len(ax.Values), 1); variants > maxExpansion {
			d.errorf(e.value, f, "the axes so far make %d variants, over the %d one study can run; split the study or use a profile's variants: to run a subset", variants, maxExpansion)
			return out
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
		out = append(out, ax)
	}
	return out
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
		attrs := map[string]string{}
		var names []string
		for _, kv := range d.pairs(e.value, f) {
			attrs[kv[0]] = kv[1]
			names = append(names, kv[0])
		}
		for i := 1; i < len(e.value.Content) && e.value.Kind == yaml.MappingNode; i += 2 {
			d.placeholders(e.value.Content[i], join(f, e.value.Content[i-1].Value), e.value.Content[i].Value)
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

func (d *decoder) load(n *yaml.Node) Plan {
	var l Plan
	for _, e := range d.mapping(n, "load", "service", "steps") {
		f := join("load", e.key)
		switch e.key {
		case "service":
			l.Service = d.nonEmpty(e.value, f)
		case "steps":
			for i, sn := range d.sequence(e.value, f) {
				sf := fmt.Sprintf("%s[%d]", f, i)
				for _, one := range d.each(sn, sf) {
					st := d.step(one.node, sf, &Step{line: sn.Line})
					for k, v := range one.vars {
						if _, dup := st.Params[k]; dup {
							d.errorf(sn, join(sf, "params."+k), "also a name of each:; give the value once")
						}
						if st.Params == nil {
							st.Params = map[string]string{}
						}
						st.Params[k] = v
					}
					l.Steps = append(l.Steps, st)
				}
			}
		}
	}
	if l.Service == "" {
		d.errorf(n, "load.service", "missing: which service receives the load")
	}
	if len(l.Steps) == 0 {
		d.errorf(n, "load.steps", "missing: at least one step")
	}
	return l
}

var stepFields = []string{"each", "name", "params", "fresh", "tag_header", "before", "collect", "events", "model", "users", "rate", "stages", "arrivals", "pacing", "tick", "think", "connections", "duration", "requests", "iterations", "timeout", "min_success", "warmup", "pause", "targets"}

// step sets on st the fields n gives, so that a profile can override some.
func (d *decoder) step(n *yaml.Node, field string, st *Step) *Step {
	for _, e := range d.mapping(n, field, stepFields...) {
		f := join(field, e.key)
		v := e.value
		switch e.key {
		case "each":
			// Expanded by each before the step is read.
		case "name":
			if st.Name = d.nonEmpty(v, f); st.Name != "" {
				d.fileName(v, f, "a step's name becomes a file name", st.Name)
			}
		case "params":
			st.Params = map[string]string{}
			for _, p := range d.pairs(v, f) {
				st.Params[p[0]] = p[1]
			}
		case "fresh":
			st.Fresh = d.boolean(v, f)
		case "tag_header":
			st.TagHeader = d.nonEmpty(v, f)
		case "before":
			st.Before = d.hooks(v, f)
		case "collect":
			st.Collect = d.hooks(v, f)
		case "events":
			st.Events = d.events(v, f)
		case "model":
			st.Load.Open = d.oneOf(v, f, "closed", "open") == "open"
		case "users":
			st.Load.Users = int(d.integer(v, f, 1))
		case "rate":
			st.Load.Rate = d.number(v, f, 0)
		case "stages":
			d.parsed(v, f, func(s string) (err error) { st.Load.Stages, err = loadspec.ParseStages(s); return })
		case "arrivals":
			d.parsed(v, f, func(s string) error { return st.Load.Arrivals.UnmarshalText([]byte(s)) })
		case "pacing":
			d.parsed(v, f, func(s string) error { return st.Load.Pacing.UnmarshalText([]byte(s)) })
		case "tick":
			st.Load.Tick = d.duration(v, f)
		case "think":
			d.parsed(v, f, func(s string) (err error) { st.Load.Think, err = loadspec.ParseThink(s); return })
		case "connections":
			st.Load.Connections = int(d.integer(v, f, 1))
		case "duration":
			st.Load.Duration = d.duration(v, f)
		case "requests":
			st.Load.Requests = d.integer(v, f, 1)
		case "iterations":
			st.Load.Iterations = int(d.integer(v, f, 1))
		case "timeout":
			st.Load.Timeout = d.duration(v, f)
		case "min_success":
			share := d.number(v, f, 0)
			st.Load.MinSuccess = &share
		case "pause":
			st.Pause = d.duration(v, f)
		case "warmup":
			st.Warmup = Warmup{}
			for _, we := range d.mapping(v, f, "duration", "requests") {
				if we.key == "duration" {
					st.Warmup.Duration = d.duration(we.value, join(f, we.key))
				} else {
					st.Warmup.Requests = d.integer(we.value, join(f, we.key), 1)
				}
			}
		case "targets":
			st.Targets = nil
			for i, tn := range d.sequence(v, f) {
				st.Targets = append(st.Targets, d.target(tn, fmt.Sprintf("%s[%d]", f, i), loadTarget))
			}
		}
	}
	return st
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
		vals := d.strs(e.value, join(field, "each."+e.key))
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

// Kinds of target: what a load sends, what setup sends, and the requests
// sent to every instance of a service around a step (hooks).
const (
	loadTarget = iota
	setupTarget
	hookTarget
)

// hooks reads before: and collect: requests.
func (d *decoder) hooks(n *yaml.Node, field string) []*Target {
	var out []*Target
	for i, hn := range d.sequence(n, field) {
		out = append(out, d.target(hn, fmt.Sprintf("%s[%d]", field, i), hookTarget))
	}
	return out
}

var eventActions = []string{"request", "kill", "restart", "pause", "resume", "link"}

// events reads a step's timeline: {at: 5s, kill: db}, {at: 2s, request: {…}}.
func (d *decoder) events(n *yaml.Node, field string) []*Event {
	var out []*Event
	for i, en := range d.sequence(n, field) {
		f := fmt.Sprintf("%s[%d]", field, i)
		ev := &Event{line: en.Line}
		for _, e := range d.mapping(en, f, append([]string{"at", "fault", "delay"}, eventActions...)...) {
			switch e.key {
			case "at":
				ev.At = d.duration(e.value, join(f, "at"))
			case "request":
				ev.Action, ev.Request = "request", d.target(e.value, join(f, "request"), loadTarget)
			case "fault":
				ev.Fault = d.oneOf(e.value, join(f, "fault"), links.Faults...)
			case "delay":
				ev.Delay = d.duration(e.value, join(f, "delay"))
			default:
				if ev.Action != "" {
					d.errorf(e.keyN, join(f, e.key), "one action per event")
				}
				ev.Action, ev.Target = e.key, d.nonEmpty(e.value, join(f, e.key))
			}
		}
		if ev.Action == "" || ev.At == 0 {
			d.errorf(en, f, "an event needs at and one of %s", strings.Join(eventActions, ", "))
		}
		d.linkEvent(en, f, ev)
		out = append(out, ev)
	}
	return out
}

func (d *decoder) target(n *yaml.Node, field string, kind int) *Target {
	t := &Target{Method: "GET", Weight: 1, ExpectStatus: "2xx"}
	fields := []string{"name", "method", "path", "headers", "body", "form", "weight", "expect_status", "expect_body"}
	switch kind {
	case setupTarget:
		fields = []string{"each", "name", "method", "path", "headers", "body", "form", "expect_status", "capture"}
	case hookTarget:
		fields = []string{"name", "service", "method", "path", "headers", "body", "expect_status"}
	}
	for _, e := range d.mapping(n, field, fields...) {
		f := join(field, e.key)
		switch e.key {
		case "name":
			t.Name = d.nonEmpty(e.value, f)
		case "method":
			t.Method = strings.ToUpper(d.nonEmpty(e.value, f))
			if err := load.CheckMethod(t.Method); t.Method != "" && err != nil {
				d.errorf(e.value, f, "%v", err)
			}
		case "path":
			t.Path = d.nonEmpty(e.value, f)
			if !strings.HasPrefix(t.Path, "/") {
				d.errorf(e.value, f, "a path starts with /, got %q", t.Path)
			}
			d.placeholders(e.value, f, t.Path)
		case "headers":
			t.Header = d.pairs(e.value, f)
			d.placeholdersIn(e.value, f)
			for _, h := range t.Header {
				if err := load.CheckHeader(h[0], h[1]); err != nil {
					d.errorf(e.value, join(f, h[0]), "%v", err)
				}
			}
		case "body":
			t.Body = d.str(e.value, f)
			d.placeholders(e.value, f, t.Body)
		case "form":
			t.Form = d.pairs(e.value, f)
			d.placeholdersIn(e.value, f)
		case "weight":
			t.Weight = int(d.integer(e.value, f, 1))
		case "expect_status":
			t.ExpectStatus = d.nonEmpty(e.value, f)
		case "expect_body":
			t.ExpectBody = d.str(e.value, f)
		case "capture":
			t.Capture = d.pairs(e.value, f)
		case "service":
			t.Service = d.nonEmpty(e.value, f)
		case "each":
			// Expanded before the target is read.
		}
	}
	if t.Path == "" {
		d.errorf(n, field, "a target needs a path")
	}
	if t.Name == "" {
		t.Name = t.Method + " " + t.Path
	}
	return t
}

// AANone turns the A/A twin off in a study file: aa: none.
const AANone = "none"

// chooseAA sets s.AA from the aa: field n (nil when not given: the first
// variant), once the profile has chosen the variants, so that the twin is
// one of those that run.
func (d *decoder) chooseAA(s *Study, n *yaml.Node, field string) {
	matrix := s.Matrix()
	if len(matrix) == 0 {
		return
	}
	if n == nil {
		s.AA = matrix[0].Key()
		return
	}
	key := d.nonEmpty(n, field)
	if key == "" {
		return
	}
	if key == AANone {
		s.AA = ""
		return
	}
	known := make([]string, len(matrix))
	for i, v := range matrix {
		known[i] = v.Key()
	}
	if slices.Contains(known, key) {
		s.AA = key
		return
	}
	where := "a variant key of the matrix"
	if s.Profile != "" {
		where = "a variant key of profile " + s.Profile
		if field == "aa" {
			where += fmt.Sprintf(" (give profiles.%s.aa)", s.Profile)
		}
	}
	d.errorf(n, field, "%q is not %s (known: %s, or %s)", key, where, strings.Join(known, ", "), AANone)
}

// applyProfile overlays a named profile: repetitions, a subset of the
// variants, and per-step overrides. It returns the profile's aa: field,
// nil when the profile gives none.
func (d *decoder) applyProfile(s *Study, profiles *yaml.Node, name string) (aa *yaml.Node) {
	entries := d.mapping(profiles, "profiles")
	for _, e := range entries {
		d.fileName(e.keyN, join("profiles", e.key), "a profile's name names run directories", e.key)
		s.Profiles = append(s.Profiles, e.key)
	}
	if name == "" {
		return nil
	}
	for _, e := range entries {
		if e.key != name {
			continue
		}
		s.Profile = name
		f := join("profiles", name)
		entries := d.mapping(e.value, f, "repetitions", "variants", "aa", "steps", "skip")
		// Overrides before skips, whatever the file's order, so that a
		// glob such as "steady-*" may cover steps another line skips.
		slices.SortStableFunc(entries, func(a, b entry) int {
			return cmpBool(a.key == "skip", b.key == "skip")
		})
		for _, pe := range entries {
			pf := join(f, pe.key)
			switch pe.key {
			case "repetitions":
				s.Repetitions = int(d.integer(pe.value, pf, 1))
			case "variants":
				d.subsetVariants(s, pe.value, pf)
			case "aa":
				aa = pe.value
			case "steps":
				d.overrideSteps(s, pe.value, pf)
			case "skip":
				d.skipSteps(s, pe.value, pf)
			}
		}
		return aa
	}
	d.errorf(nil, "profiles", "no profile %q (profiles: %s)", name, strings.Join(s.Profiles, ", "))
	return nil
}

func (d *decoder) subsetVariants(s *Study, n *yaml.Node, field string) {
	for _, e := range d.mapping(n, field) {
		f := join(field, e.key)
		i := slices.IndexFunc(s.Variants, func(a Axis) bool { return a.Name == e.key })
		if i < 0 {
			d.errorf(e.keyN, f, "no such axis in variants")
			continue
		}
		vals := d.strs(e.value, f)
		for _, v := range vals {
			if !slices.Contains(s.Variants[i].Values, v) {
				d.errorf(e.value, f, "%q is not a value of axis %s", v, e.key)
			}
		}
		if s.Variants[i].declared == nil {
			s.Variants[i].declared = s.Variants[i].Values
		}
		s.Variants[i].Values = vals
	}
}

// overrideSteps applies overrides keyed by step name or glob ("post-*"),
// in file order.
func (d *decoder) overrideSteps(s *Study, n *yaml.Node, field string) {
	for _, e := range d.mapping(n, field) {
		matched := false
		for _, st := range s.Load.Steps {
			if ok, _ := path.Match(e.key, st.Name); ok {
				matched = true
				d.step(e.value, join(field, e.key), st)
			}
		}
		if !matched {
			d.errorf(e.keyN, join(field, e.key), "no step of that name in load.steps")
		}
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// skipSteps drops the steps whose names match any of the globs.
func (d *decoder) skipSteps(s *Study, n *yaml.Node, field string) {
	for i, pattern := range d.strs(n, field) {
		before := len(s.Load.Steps)
		s.Load.Steps = slices.DeleteFunc(s.Load.Steps, func(st *Step) bool {
			ok, _ := path.Match(pattern, st.Name)
			return ok
		})
		if len(s.Load.Steps) == before {
			d.errorf(n, fmt.Sprintf("%s[%d]", field, i), "%q matches no step", pattern)
		}
	}
	if len(s.Load.Steps) == 0 {
		d.errorf(n, field, "skips every step")
	}
}

// check validates what spans fields: references, models and bounds.
func (d *decoder) check(s *Study) {
	for _, svc := range s.Services {
		f := join("services", svc.Name)
		if svc.Build != "" && s.Build(svc.Build) == nil {
			d.errorf(nil, join(f, "build"), "no build named %q", svc.Build)
		}
		for _, a := range svc.After {
			if s.Service(a) == nil || a == svc.Name {
				d.errorf(nil, join(f, "after"), "no other service named %q (dependencies start before every service)", a)
			}
		}
		if s.Dependency(svc.Name) != nil {
			d.errorf(nil, f, "a dependency has the same name")
		}
		d.checkWhen(s, svc)
	}
	for _, svc := range s.Services {
		if svc.ReplicasFrom == "" {
			continue
		}
		f := join(join("services", svc.Name), "replicas")
		i := slices.IndexFunc(s.Variants, func(a Axis) bool { return a.Name == svc.ReplicasFrom })
		if i < 0 {
			d.errorf(nil, f, "{%s} is not an axis", svc.ReplicasFrom)
			continue
		}
		for _, v := range s.Variants[i].Values {
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				d.errorf(nil, f, "axis %s value %q is not a replica count (a whole number ≥ 1)", svc.ReplicasFrom, v)
			}
		}
	}
	for i, st := range s.Load.Steps {
		f := fmt.Sprintf("load.steps[%d]", i)
		for _, h := range append(slices.Clone(st.Before), st.Collect...) {
			if h.Service != "" && s.Service(h.Service) == nil {
				d.errorf(nil, f, "hook %s: no service named %q", h.Name, h.Service)
			}
		}
		for _, ev := range st.Events {
			if ev.Action == "link" {
				d.checkLinkEvent(s, ev, f)
			} else if ev.Action != "request" && s.Service(ev.Target) == nil && s.Dependency(ev.Target) == nil {
				d.errorf(nil, f, "event %s: no service or dependency named %q", ev.Action, ev.Target)
			}
		}
	}
	if c := cycle(s); c != nil {
		d.errorf(nil, join(join("services", c[len(c)-2]), "after"), "start order has a cycle: %s", strings.Join(c, " → "))
	}
	if s.Load.Service != "" && s.Service(s.Load.Service) == nil {
		msg := fmt.Sprintf("no service named %q", s.Load.Service)
		if placeholder.Pattern.MatchString(s.Load.Service) {
			// The runner and the analyses read one service, by name, in
			// every variant.
			msg = fmt.Sprintf("%q: the load goes to one service, named as it is in services:, in every variant; to vary what answers it, give that service's command from the variant (command: \"{AXIS.ATTR}\", the axis' values being mappings) and start other services only in the variants that need them (when:)", s.Load.Service)
		}
		d.errorf(nil, "load.service", "%s", msg)
	}
	names := map[string]bool{}
	for i, st := range s.Load.Steps {
		f := fmt.Sprintf("load.steps[%d]", i)
		if st.Name == "" {
			d.errorf(&yaml.Node{Line: st.line}, f, "a step needs a name")
		} else if names[st.Name] {
			d.errorf(&yaml.Node{Line: st.line}, f, "step name %q used twice", st.Name)
		}
		names[st.Name] = true
		if msg := st.problem(); msg != "" {
			d.errorf(&yaml.Node{Line: st.line}, f, "%s", msg)
		}
	}
	seen := map[string]bool{}
	for i, t := range s.Setup {
		if seen[t.Name] {
			d.errorf(nil, fmt.Sprintf("setup[%d]", i), "setup name %q used twice: give each a name", t.Name)
		}
		seen[t.Name] = true
	}
	d.checkPlaceholders(s)
	d.checkPlacement(s)
	d.checkLinks(s)
	d.checkHosts(s)
}

// problem explains why a step cannot run, or returns "": the load is
// checked by the same code as msbench load's.
func (st *Step) problem() string {
	if len(st.Targets) == 0 {
		return "no targets"
	}
	if err := st.Load.Validate(); err != nil {
		return err.Error()
	}
	return ""
}

// cycle returns the services of a start-order cycle, the one met twice
// first and last, or nil.
func cycle(s *Study) []string {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, path []string) []string
	visit = func(name string, path []string) []string {
		switch state[name] {
		case 1:
			return append(path, name)
		case 2:
			return nil
		}
		state[name] = 1
		if svc := s.Service(name); svc != nil {
			for _, a := range svc.After {
				if c := visit(a, append(path, name)); c != nil {
					return c
				}
			}
		}
		state[name] = 2
		return nil
	}
	for _, svc := range s.Services {
		if c := visit(svc.Name, nil); c != nil {
			return c
		}
	}
	return nil
}

// StartOrder lists services so that each comes after those it waits for.
func (s *Study) StartOrder() []*Service {
	var out []*Service
	done := map[string]bool{}
	var add func(*Service)
	add = func(svc *Service) {
		if done[svc.Name] {
			return
		}
		done[svc.Name] = true
		for _, a := range svc.After {
			if dep := s.Service(a); dep != nil {
				add(dep)
			}
		}
		out = append(out, svc)
	}
	for _, svc := range s.Services {
		add(svc)
	}
	return out
}
