// Package study reads experiment files: what is under test, the variants to
// compare, the load plan and the profiles (quick, paper) that scale it.
// Every mistake is reported with its file, line and field.
package study

import (
	"slices"
	"time"

	"github.com/msbench/msbench/internal/tokens"

	"github.com/msbench/msbench/internal/loadspec"
)

// Study is one experiment file after a profile has been applied.
type Study struct {
	Name        string
	Title       string
	Source      string
	File        string
	Builds      []*Build
	Deps        []*Dependency
	Services    []*Service
	Variants    []Axis    // the matrix; each combination is one variant
	Setup       []*Target // requests sent once per variant before the load, capturing values
	Load        Plan
	Placement   *Placement    // cores of the generator, services, dependencies; nil: the default
	Links       []*Link       // emulated network links between services, dependencies and the generator
	Hosts       []*Host       // emulated machines, each a network namespace; nil: all on msbench's
	Tokens      []tokens.Spec // JSON Web Tokens minted with a fresh key for every run
	Datasets    []Dataset     // input files: shared, or a build's stand-in
	Repetitions int
	// AA is the key of the variant measured twice in every repetition, as
	// two independent deployments, so that the report can tell how far
	// identical systems come apart on this machine (the A/A noise floor);
	// "" for none. A study file's aa: field chooses it (default: the first
	// variant of the matrix; aa: none turns it off).
	AA       string
	Profile  string                       // applied profile, "" for none
	Profiles []string                     // all profile names, in file order
	lines    struct{ variants, load int } // where Check points
}

// Build makes artifacts once and caches them on a hash of their inputs.
type Build struct {
	Name    string
	Dir     string // relative to the repository root
	Command string // run by sh in Dir; {out} is the artifact directory
	// Ignore lists path prefixes under Dir that do not change the build.
	Ignore []string
}

// Dependency is a real server (a database, a broker) msbench starts for
// every variant before the services, from Debian's packages.
type Dependency struct {
	Name   string
	Kind   string // postgres, redis, rabbitmq, mariadb, mongo
	Limits Limits
}

// DependencyKinds are the servers msbench can start (package deps, which
// the runner's tests hold to this list).
var DependencyKinds = []string{"mariadb", "mongo", "postgres", "rabbitmq", "redis"}

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
	Name     string
	Build    string // name of a build it needs, or ""
	Command  string // run by sh; placeholders resolved at start
	Dir      string
	Env      [][2]string
	After    []string // services that must be ready first
	Ready    Ready
	Replicas int
	// ReplicasFrom names an axis whose value is the replica count, for
	// studies that compare one instance with several.
	ReplicasFrom string
	Limits       Limits
	User         string // run as this system user
	// When limits the service to the variants whose value on each named
	// axis is one of those listed (frameworks that need a registry, say);
	// nil: every variant.
	When map[string][]string
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

// Ready says how to tell a service can take requests.
type Ready struct {
	HTTP    string // URL answered with 2xx
	TCP     string // address that accepts connections
	Timeout time.Duration
}

// Limits caps a service's resources; zero means no cap.
type Limits struct {
	CPUs        float64
	MemoryBytes int64
}

// Axis is one dimension of the variant matrix. A value may carry
// attributes, e.g. the command of one implementation, which placeholders
// {AXIS.ATTR} read.
type Axis struct {
	Name   string
	Values []string
	Attrs  map[string]map[string]string // value → attribute → text
	// declared are the values the file gives, before a profile keeps a
	// subset; nil when no profile did.
	declared []string
}

// Plan is the load plan: which service receives it and the steps, in order.
type Plan struct {
	Service string
	Steps   []*Step
}

// Step is one measured load (after an optional warm-up).
type Step struct {
	Name string
	// Params are what the step stands for, as data: its each: values and
	// its params:, e.g. {op: post, format: png, size: 0128k}. Analyses
	// select steps by them, never by parsing the name.
	Params map[string]string
	// Load is the load as msbench load takes it, validated by the same
	// code; its targets are the step's Targets, resolved at run time.
	Load    loadspec.Spec
	Warmup  Warmup
	Pause   time.Duration // after the step, before the next
	Targets []*Target
	// Fresh restarts the dependencies and services before the step and
	// skips verification, so that the step meets cold caches.
	Fresh bool
	// TagHeader names a response header whose number each record keeps.
	TagHeader string
	// Before are requests sent to every instance of a service before the
	// load; Collect likewise after it, their JSON answers kept.
	Before  []*Target
	Collect []*Target
	// Events happen while the load runs: requests (e.g. mutations) and
	// faults (kill, restart, pause, resume a service or dependency).
	Events []*Event
	line   int
}

// Event is one thing done at a moment of a step's load.
type Event struct {
	At      time.Duration
	Action  string  // request, kill, restart, pause, resume, link
	Target  string  // the service or dependency acted on; for link, the link FROM>TO
	Request *Target // for Action request; sent to the load's service
	// Fault (Action link) is a links.Fault: reset, timeout, slow_close,
	// or none to clear; Delay is how long slow_close holds a close.
	Fault string
	Delay time.Duration
	line  int
}

// Warmup is load sent and summarised apart before the step is measured.
type Warmup struct {
	Duration time.Duration
	Requests int64
}

// Target is one request of a step's mix.
type Target struct {
	Name         string
	Method       string
	Path         string
	Header       [][2]string
	Body         string
	Form         [][2]string // name → value, or @path for a file
	Weight       int
	ExpectStatus string
	ExpectBody   string
	// Capture (setup requests only) names values taken from the JSON
	// answer: placeholder key → top-level field, read as {setup.NAME.KEY}.
	Capture [][2]string
	// Service (before and collect requests only) is the service whose
	// every instance gets the request; empty means the load's service.
	Service string
}

// Variant is one combination of axis values.
type Variant struct {
	Values [][2]string // axis name → value, in axis order
	// Twin marks the A/A twin: a second, independent deployment of the
	// variant with the same Values, keyed apart (see Study.Twin).
	Twin bool
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
	return out
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

// Build returns the named build or nil.
func (s *Study) Build(name string) *Build {
	for _, b := range s.Builds {
		if b.Name == name {
			return b
		}
	}
	return nil
}
