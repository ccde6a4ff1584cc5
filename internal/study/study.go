// Package study reads experiment files: what is under test, the variants to
// compare, the load plan and the profiles (quick, paper) that scale it.
// Every mistake is reported with its file, line and field.
//
// # Design
//
// The schema is Go types, not strings. Each section of a study file is a
// struct whose yaml tags are its keys and whose field types say how a
// value is read (sections.go; scalar types such as durations and sizes in
// scalars.go), so a key is spelled once and a key nobody reads cannot be
// accepted. The sections are decoded by walking yaml.v3's node tree
// (walk.go) rather than by yaml.v3's own decoder, which stops at the first
// mistake and names neither the field nor, for a custom type, the line:
// here every mistake is collected with its file, line and dotted field,
// and all are reported at once. Each section validates itself once read
// (a validator), and what spans sections (a name referring to nothing)
// is checked on the whole Study.
//
// A profile overrides a step by decoding its keys onto a copy of the
// step's section: a key given replaces that field, everything else stays,
// and nothing resets by hand. Placeholders are checked against what the
// study's parts declare they provide (placeholder.go).
//
// The Study is what the runner and every report use, and a run keeps it
// as study.resolved.json, read back by reports made with later versions:
// its JSON names are pinned by tags and the file carries FormatVersion,
// so that a renamed field cannot silently empty an old run, and a newer
// run says what an older msbench cannot read (resolved.go).
package study

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/tokens"
)

// Study is one experiment file after a profile has been applied.
type Study struct {
	Name     string        `json:"Name"`
	Title    string        `json:"Title"`
	Source   string        `json:"Source"`
	File     string        `json:"File"`
	Builds   []*Build      `json:"Builds"`
	Deps     []*Dependency `json:"Deps"`
	Services []*Service    `json:"Services"`
	Variants []Axis        `json:"Variants"` // the matrix; each combination is one variant, unless Only names them
	// Only keeps the variants of the matrix with these keys, in the
	// matrix's order, when a profile names them (only:): the diagonal of
	// two axes that no subset of each axis' values can make. nil keeps
	// every combination.
	Only        []string      `json:"Only,omitempty"`
	Setup       []*Target     `json:"Setup"` // requests sent once per variant before the load, capturing values
	Load        Plan          `json:"Load"`
	Placement   *Placement    `json:"Placement"` // cores of the generator, services, dependencies; nil: the default
	Links       []*Link       `json:"Links"`     // emulated network links between services, dependencies and the generator
	Hosts       []*Host       `json:"Hosts"`     // emulated machines, each a network namespace; nil: all on msbench's
	Tokens      []tokens.Spec `json:"Tokens"`    // JSON Web Tokens minted with a fresh key for every run
	Datasets    []Dataset     `json:"Datasets"`  // input files: shared, or a build's stand-in
	Repetitions int           `json:"Repetitions"`
	// Interleave shapes the slices of interleaved steps.
	Interleave Interleaving `json:"Interleave,omitzero"`
	// AA is the key of the variant measured twice in every repetition, as
	// two independent deployments, so that the report can tell how far
	// identical systems come apart on this machine (the A/A noise floor);
	// "" for none. A study file's aa: field chooses it (default: the first
	// variant of the matrix; aa: none turns it off).
	AA string `json:"AA"`
	// Baseline is the key of the variant every other is set against in
	// the report's comparison; a study file's baseline: field chooses it
	// (default: the first variant of the matrix). Runs written before it
	// existed lack it: read BaselineKey.
	Baseline string                       `json:"Baseline,omitempty"`
	Profile  string                       `json:"Profile"`  // applied profile, "" for none
	Profiles []string                     `json:"Profiles"` // all profile names, in file order
	lines    struct{ variants, load int } // where Check points
}

// Interleaving is how an interleaved step is cut into slices. In each
// round every variant of the repetition gets one slice of the step's load,
// in a fresh random order; the first Warmup of a slice is sent but not
// counted. A step bounded by time gets one round per Slice of it; one
// bounded by a count of requests, which says nothing of how long it takes,
// Rounds rounds.
type Interleaving struct {
	Slice  time.Duration `json:"Slice"`
	Warmup time.Duration `json:"Warmup"`
	Rounds int           `json:"Rounds"`
	// Freeze stops every process of the deployments waiting their turn
	// (idle: freeze), so that their JITs, collectors and heartbeats take
	// no CPU from the one measured; they run on by default (idle: run).
	Freeze bool `json:"Freeze,omitempty"`
}

// Build makes artifacts once and caches them on a hash of their inputs.
type Build struct {
	Name    string `json:"Name"`
	Dir     string `json:"Dir"`     // relative to the repository root
	Command string `json:"Command"` // run by sh in Dir; {out} is the artifact directory
	// Ignore lists path prefixes under Dir that do not change the build.
	Ignore []string `json:"Ignore"`
}

// Dependency is a real server (a database, a broker) msbench starts for
// every variant before the services, from Debian's packages.
type Dependency struct {
	Name   string `json:"Name"`
	Kind   string `json:"Kind"` // postgres, redis, rabbitmq, mariadb, mongo
	Limits Limits `json:"Limits"`
}

// kindList names the servers msbench can start, for messages.
func kindList() string {
	var names []string
	for _, k := range deps.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// Dependency returns the named dependency or nil.
func (s *Study) Dependency(name string) *Dependency {
	for _, d := range s.Deps {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Service is one process (or several replicas) under test.
type Service struct {
	Name     string      `json:"Name"`
	Build    string      `json:"Build"`   // name of a build it needs, or ""
	Command  string      `json:"Command"` // run by sh; placeholders resolved at start
	Dir      string      `json:"Dir"`
	Env      [][2]string `json:"Env"`
	After    []string    `json:"After"` // services that must be ready first
	Ready    Ready       `json:"Ready"`
	Replicas int         `json:"Replicas"`
	// ReplicasFrom names an axis whose value is the replica count, for
	// studies that compare one instance with several.
	ReplicasFrom string `json:"ReplicasFrom"`
	Limits       Limits `json:"Limits"`
	User         string `json:"User"` // run as this system user
	// When limits the service to the variants whose value on each named
	// axis is one of those listed (frameworks that need a registry, say);
	// nil: every variant.
	When map[string][]string `json:"When"`
}

// RunsIn reports whether the service runs in variant v.
func (svc *Service) RunsIn(v Variant) bool {
	for axis, values := range svc.When {
		if !slices.Contains(values, v.Get(axis)) {
			return false
		}
	}
	return true
}

// Instances is how many instances of svc variant v runs: none where it
// does not run in v, else its replicas, or its axis's value in v where
// the count comes from one (the study file checked that every value of
// the axis is a count).
func (svc *Service) Instances(v Variant) int {
	if !svc.RunsIn(v) {
		return 0
	}
	if svc.ReplicasFrom != "" {
		n, _ := strconv.Atoi(v.Get(svc.ReplicasFrom))
		return n
	}
	return svc.Replicas
}

// Ready says how to tell a service can take requests.
type Ready struct {
	HTTP    string        `json:"HTTP"` // URL answered with 2xx
	TCP     string        `json:"TCP"`  // address that accepts connections
	Timeout time.Duration `json:"Timeout"`
}

// Limits caps a service's resources; zero means no cap.
type Limits struct {
	CPUs        float64 `json:"CPUs"`
	MemoryBytes int64   `json:"MemoryBytes"`
}

// Axis is one dimension of the variant matrix. A value may carry
// attributes, e.g. the command of one implementation, which placeholders
// {AXIS.ATTR} read.
type Axis struct {
	Name   string                       `json:"Name"`
	Values []string                     `json:"Values"`
	Attrs  map[string]map[string]string `json:"Attrs"` // value → attribute → text
	// declared are the values the file gives, before a profile keeps a
	// subset; nil when no profile did.
	declared []string
}

// Plan is the load plan: which service receives it and the steps, in order.
type Plan struct {
	Service string  `json:"Service"`
	Steps   []*Step `json:"Steps"`
}

// Step is one measured load (after an optional warm-up).
type Step struct {
	Name string `json:"Name"`
	// Params are what the step stands for, as data: its each: values and
	// its params:, e.g. {op: post, format: png, size: 0128k}. Analyses
	// select steps by them, never by parsing the name.
	Params map[string]string `json:"Params"`
	// Load is the load as msbench load takes it, validated by the same
	// code; its targets are the step's Targets, resolved at run time.
	Load    loadspec.Spec `json:"Load"`
	Warmup  Warmup        `json:"Warmup"`
	Pause   time.Duration `json:"Pause"` // after the step, before the next
	Targets []*Target     `json:"Targets"`
	// Fresh restarts the dependencies and services before the step and
	// skips verification, so that the step meets cold caches.
	Fresh bool `json:"Fresh"`
	// Interleaved steps are measured in slices, the variants of a
	// repetition taking turns (Study.Interleave); the others in one piece
	// per variant, for the reason Sequential gives. Runs written before
	// interleaving read as sequential, as they were measured.
	Interleaved bool   `json:"Interleaved,omitempty"`
	Sequential  string `json:"Sequential,omitempty"`
	// TagHeader names a response header whose number each record keeps.
	TagHeader string `json:"TagHeader"`
	// Before are requests sent to every instance of a service before the
	// load; Collect likewise after it, their JSON answers kept.
	Before  []*Target `json:"Before"`
	Collect []*Target `json:"Collect"`
	// Events happen while the load runs: requests (e.g. mutations) and
	// faults (kill, restart, pause, resume a service or dependency).
	Events []*Event `json:"Events"`
	line   int
}

// Event is one thing done at a moment of a step's load.
type Event struct {
	At      time.Duration `json:"At"`
	Action  string        `json:"Action"`  // request, kill, restart, pause, resume, link
	Target  string        `json:"Target"`  // the service or dependency acted on; for link, the link FROM>TO
	Request *Target       `json:"Request"` // for Action request; sent to the load's service
	// Fault (Action link) is a links.Fault: reset, timeout, slow_close,
	// or none to clear; Delay is how long slow_close holds a close.
	Fault string        `json:"Fault"`
	Delay time.Duration `json:"Delay"`
	line  int
}

// Warmup is load sent and summarised apart before the step is measured.
type Warmup struct {
	Duration time.Duration `json:"Duration"`
	Requests int64         `json:"Requests"`
}

// Set reports whether there is a warm-up: a time or a count.
func (w Warmup) Set() bool { return w.Requests > 0 || w.Duration > 0 }

// Target is one request of a step's mix.
type Target struct {
	Name         string      `json:"Name"`
	Method       string      `json:"Method"`
	Path         string      `json:"Path"`
	Header       [][2]string `json:"Header"`
	Body         string      `json:"Body"`
	Form         [][2]string `json:"Form"` // name → value, or @path for a file
	Weight       int         `json:"Weight"`
	ExpectStatus string      `json:"ExpectStatus"`
	ExpectBody   string      `json:"ExpectBody"`
	// Capture (setup requests only) names values taken from the JSON
	// answer: placeholder key → top-level field, read as {setup.NAME.KEY}.
	Capture [][2]string `json:"Capture"`
	// Service (before and collect requests only) is the service whose
	// every instance gets the request; empty means the load's service.
	Service string `json:"Service"`
}

// Variant is one combination of axis values.
type Variant struct {
	Values [][2]string `json:"Values"` // axis name → value, in axis order
	// Twin marks the A/A twin: a second, independent deployment of the
	// variant with the same Values, keyed apart (see Study.Twin).
	Twin bool `json:"Twin"`
}

// TwinSuffix ends the key of an A/A twin: its results go to
// runs/rep-N/KEY@aa/.
const TwinSuffix = "@aa"

// Key names the variant in paths and tables, e.g. "gin-pooled", or
// "gin-pooled@aa" for its A/A twin.
func (v Variant) Key() string {
	if v.Twin {
		return Variant{Values: v.Values}.Key() + TwinSuffix
	}
	key := ""
	for i, kv := range v.Values {
		if i > 0 {
			key += "-"
		}
		key += kv[1]
	}
	if key == "" {
		return "default"
	}
	return key
}

// Placeholders returns the variant's axis values and their attributes as
// placeholder values: {AXIS} and {AXIS.ATTR}.
func (s *Study) Placeholders(v Variant) map[string]string {
	out := map[string]string{}
	for _, kv := range v.Values {
		out[kv[0]] = kv[1]
		for _, ax := range s.Variants {
			if ax.Name == kv[0] {
				for attr, text := range ax.Attrs[kv[1]] {
					out[kv[0]+"."+attr] = text
				}
			}
		}
	}
	return out
}

// ExpandAttrs sets the variant's placeholders (Placeholders) in values,
// each expanded with values: an axis attribute may name builds, services
// and dependencies, known only once the variant is deployed, and a
// service's own values (the addresses it dials) change what it names.
func (s *Study) ExpandAttrs(v Variant, values map[string]string) error {
	for k, text := range s.Placeholders(v) {
		x, err := placeholder.Expand(text, values)
		if err != nil {
			return fmt.Errorf("variant value %s: %w", k, err)
		}
		values[k] = x
	}
	return nil
}

// SetServiceAddrs sets service.NAME.addr, .addrs and .port in values: the
// first of addrs (host:port), all of them joined by commas, and the
// first's port.
func SetServiceAddrs(values map[string]string, name string, addrs []string) {
	prefix := "service." + name + "."
	values[prefix+"addr"] = addrs[0]
	values[prefix+"addrs"] = strings.Join(addrs, ",")
	_, values[prefix+"port"], _ = net.SplitHostPort(addrs[0])
}

// Get returns the value of an axis.
func (v Variant) Get(axis string) string {
	for _, kv := range v.Values {
		if kv[0] == axis {
			return kv[1]
		}
	}
	return ""
}

// Matrix lists every variant, the first axis varying slowest.
func (s *Study) Matrix() []Variant {
	out := []Variant{{}}
	for _, ax := range s.Variants {
		var next []Variant
		for _, v := range out {
			for _, val := range ax.Values {
				vals := append(append([][2]string{}, v.Values...), [2]string{ax.Name, val})
				next = append(next, Variant{Values: vals})
			}
		}
		out = next
	}
	if s.Only != nil {
		out = slices.DeleteFunc(out, func(v Variant) bool { return !slices.Contains(s.Only, v.Key()) })
	}
	return out
}

// Keys are the variants' keys, in their order.
func Keys(vs []Variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Key()
	}
	return out
}

// BaselineKey is the key of the baseline variant: Baseline, or for a run
// written before studies named one, the first variant of the matrix.
func (s *Study) BaselineKey() string {
	if s.Baseline != "" {
		return s.Baseline
	}
	if m := s.Matrix(); len(m) > 0 {
		return m[0].Key()
	}
	return ""
}

// Twin returns the A/A twin, the variant named by AA with Twin set, or
// false when the study measures none.
func (s *Study) Twin() (Variant, bool) {
	if s.AA == "" {
		return Variant{}, false
	}
	for _, v := range s.Matrix() {
		if v.Key() == s.AA {
			v.Twin = true
			return v, true
		}
	}
	return Variant{}, false
}

// Runs lists what every repetition deploys and measures: the matrix and,
// last, the A/A twin if any. The runner shuffles it per repetition.
func (s *Study) Runs() []Variant {
	out := s.Matrix()
	if t, ok := s.Twin(); ok {
		out = append(out, t)
	}
	return out
}

// Service returns the named service or nil.
func (s *Study) Service(name string) *Service {
	for _, svc := range s.Services {
		if svc.Name == name {
			return svc
		}
	}
	return nil
}

// Step returns the named step of the load, or nil.
func (s *Study) Step(name string) *Step {
	for _, st := range s.Load.Steps {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// Build returns the named build or nil.
func (s *Study) Build(name string) *Build {
	for _, b := range s.Builds {
		if b.Name == name {
			return b
		}
	}
	return nil
}
