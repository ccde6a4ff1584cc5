package study

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/hosts"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/pacer"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/tokens"
)

// The sections of a study file as written. Parse decodes the file into a
// fileSection and turns it into a Study: defaults filled in, names checked,
// placeholders and references resolved against the whole. A key is added
// by adding a field here (its tag is the key, its type how it is read) and
// where the Study carries it.

// fileSection is a whole study file.
type fileSection struct {
	Study        nonEmpty                  `yaml:"study"`
	Title        string                    `yaml:"title"`
	Source       string                    `yaml:"source"`
	Builds       byName[buildSection]      `yaml:"builds"`
	Dependencies byName[dependencySection] `yaml:"dependencies"`
	Services     byName[serviceSection]    `yaml:"services"`
	Variants     axes                      `yaml:"variants"`
	AA           *yaml.Node                `yaml:"aa"` // chosen once a profile has chosen the variants
	Baseline     *yaml.Node                `yaml:"baseline"`
	Setup        []yaml.Node               `yaml:"setup"`
	Load         loadSection               `yaml:"load"`
	Repetitions  count                     `yaml:"repetitions"`
	Profiles     byName[profileSection]    `yaml:"profiles"`
	Placement    *placementSection         `yaml:"placement"`
	Links        []linkSection             `yaml:"links"`
	Hosts        byName[[]string]          `yaml:"hosts"`
	Tokens       byName[tokenSection]      `yaml:"tokens"`
	Datasets     byName[datasetSection]    `yaml:"datasets"`
	Interleave   interleaveSection         `yaml:"interleave"`
}

// elementName keeps a token's or a dataset's name one element of a
// placeholder ({tokens.NAME.KEY}, {dataset.NAME}).
var elementName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func (f *fileSection) validate(d *decoder, _ string) {
	for _, req := range []string{"study", "services", "load"} {
		if d.lines[req] == 0 {
			d.errorf(nil, req, "missing: a study needs study, services and load")
		}
	}
	if f.Study != "" {
		d.fileName(nil, "study", "a study's name names its run directories", string(f.Study))
	}
	if d.lines["services"] > 0 && len(f.Services) == 0 {
		d.errorf(nil, "services", "no service")
	}
	for _, b := range f.Builds {
		d.fileName(b.key, join("builds", b.name), "a build's name becomes a file name", b.name)
	}
	for _, dep := range f.Dependencies {
		d.fileName(dep.key, join("dependencies", dep.name), "a dependency's name becomes a file name", dep.name)
	}
	for _, svc := range f.Services {
		d.fileName(svc.key, join("services", svc.name), "a service's name becomes a file name", svc.name)
	}
	for _, p := range f.Profiles {
		d.fileName(p.key, join("profiles", p.name), "a profile's name names run directories", p.name)
	}
	for _, h := range f.Hosts {
		hf := join("hosts", h.name)
		if !hosts.NamePattern.MatchString(h.name) {
			d.errorf(h.key, hf, "a host's name is lower-case letters, digits and dashes, starting with a letter, at most 31 of them")
		}
		if len(h.value) == 0 {
			d.errorf(nil, hf, "a host runs at least one service")
		}
	}
	for _, t := range f.Tokens {
		if !elementName.MatchString(t.name) {
			d.errorf(t.key, join("tokens", t.name), "a token's name is lower-case letters, digits and dashes, starting with a letter")
		}
	}
	for _, ds := range f.Datasets {
		if !elementName.MatchString(ds.name) {
			d.errorf(ds.key, join("datasets", ds.name), "a dataset's name is lower-case letters, digits and dashes, starting with a letter")
		}
	}
}

// study makes the Study the file describes, before any profile, and the
// drafts of its steps, which a profile's overrides are decoded onto.
func (f *fileSection) study(d *decoder, file string) (*Study, []stepDraft) {
	s := &Study{
		Name:        string(f.Study),
		Title:       f.Title,
		Source:      f.Source,
		File:        file,
		Variants:    f.Variants,
		Repetitions: max(int(f.Repetitions), 1),
		Placement:   f.Placement.placement(),
		Interleave:  f.Interleave.interleaving(),
	}
	// What Check says of a missing variants: or load: points at the top.
	s.lines.variants, s.lines.load = d.lineOf("variants"), d.lineOf("load")
	for _, b := range f.Builds {
		s.Builds = append(s.Builds, &Build{Name: b.name, Dir: string(b.value.Dir), Command: string(b.value.Command), Ignore: b.value.Ignore})
	}
	for _, dep := range f.Dependencies {
		s.Deps = append(s.Deps, &Dependency{Name: dep.name, Kind: string(dep.value.Kind), Limits: dep.value.Limits.limits()})
	}
	for _, svc := range f.Services {
		s.Services = append(s.Services, svc.value.service(svc.name))
	}
	for i, n := range f.Setup {
		field := fmt.Sprintf("setup[%d]", i)
		for _, one := range d.each(&n, field) {
			var t setupTarget
			d.decode(one.node, field, reflect.ValueOf(&t).Elem())
			s.Setup = append(s.Setup, t.target())
		}
	}
	for _, p := range f.Profiles {
		s.Profiles = append(s.Profiles, p.name)
	}
	for i, l := range f.Links {
		s.Links = append(s.Links, &Link{From: string(l.From), To: string(l.To), Latency: string(l.Latency), Jitter: string(l.Jitter), Bandwidth: string(l.Bandwidth), line: d.lineOf(fmt.Sprintf("links[%d]", i))})
	}
	for _, h := range f.Hosts {
		s.Hosts = append(s.Hosts, &Host{Name: h.name, Services: h.value, line: h.key.Line})
	}
	for _, t := range f.Tokens {
		s.Tokens = append(s.Tokens, tokens.Spec{Name: t.name, Algorithm: string(t.value.Algorithm), Expires: time.Duration(t.value.Expires), Claims: t.value.Claims})
	}
	for _, ds := range f.Datasets {
		s.Datasets = append(s.Datasets, Dataset{Name: ds.name, File: string(ds.value.File), Otherwise: string(ds.value.Otherwise)})
	}
	s.Load.Service = string(f.Load.Service)
	drafts := d.steps(f.Load.Steps)
	for _, dr := range drafts {
		s.Load.Steps = append(s.Load.Steps, dr.step())
	}
	return s, drafts
}

type buildSection struct {
	Dir     nonEmpty `yaml:"dir"`     // relative to the repository root
	Command template `yaml:"command"` // run by sh in Dir
	Ignore  []string `yaml:"ignore"`
}

func (b *buildSection) validate(d *decoder, field string) {
	if dir := string(b.Dir); filepath.IsAbs(dir) || strings.HasPrefix(filepath.Clean(dir), "..") {
		d.errorf(nil, join(field, "dir"), "must be a path inside the repository")
	}
	if b.Dir == "" || b.Command == "" {
		d.errorf(nil, field, "a build needs dir and command")
	}
}

type dependencySection struct {
	Kind   nonEmpty      `yaml:"kind"`
	Limits limitsSection `yaml:"limits"`
}

func (dep *dependencySection) validate(d *decoder, field string) {
	switch {
	case dep.Kind == "":
		d.errorf(nil, field, "a dependency needs a kind")
	case !slices.Contains(deps.Kinds(), deps.Kind(dep.Kind)):
		d.errorf(nil, join(field, "kind"), "unknown kind %q (known: %s)", dep.Kind, kindList())
	}
}

type limitsSection struct {
	CPUs   cpuShare `yaml:"cpus"`
	Memory byteSize `yaml:"memory"`
}

func (l limitsSection) limits() Limits {
	return Limits{CPUs: float64(l.CPUs), MemoryBytes: int64(l.Memory)}
}

type serviceSection struct {
	Build    nonEmpty            `yaml:"build"`
	Command  template            `yaml:"command"`
	Dir      nonEmpty            `yaml:"dir"`
	Env      templatePairs       `yaml:"env"`
	After    []string            `yaml:"after"`
	Ready    *readySection       `yaml:"ready"`
	Replicas replicas            `yaml:"replicas"`
	Limits   limitsSection       `yaml:"limits"`
	User     nonEmpty            `yaml:"user"`
	When     map[string][]string `yaml:"when"`
}

func (svc *serviceSection) validate(d *decoder, field string) {
	if svc.Command == "" {
		d.errorf(nil, field, "a service needs a command")
	}
}

// defaultReadyTimeout is how long a service may take to become ready.
const defaultReadyTimeout = 60 * time.Second

func (svc *serviceSection) service(name string) *Service {
	out := &Service{
		Name:         name,
		Build:        string(svc.Build),
		Command:      string(svc.Command),
		Dir:          string(svc.Dir),
		Env:          svc.Env,
		After:        svc.After,
		Ready:        Ready{Timeout: defaultReadyTimeout},
		Replicas:     max(svc.Replicas.n, 1),
		ReplicasFrom: svc.Replicas.axis,
		Limits:       svc.Limits.limits(),
		User:         string(svc.User),
		When:         svc.When,
	}
	if r := svc.Ready; r != nil {
		out.Ready = Ready{HTTP: string(r.HTTP), TCP: string(r.TCP), Timeout: cmp.Or(time.Duration(r.Timeout), defaultReadyTimeout)}
	}
	return out
}

type readySection struct {
	HTTP    template `yaml:"http"`
	TCP     template `yaml:"tcp"`
	Timeout duration `yaml:"timeout"`
}

func (r *readySection) validate(d *decoder, field string) {
	if (r.HTTP == "") == (r.TCP == "") {
		d.errorf(nil, field, "give exactly one of http or tcp")
	}
}

type loadSection struct {
	Service nonEmpty    `yaml:"service"`
	Steps   []yaml.Node `yaml:"steps"` // templates, expanded by each
}

func (l *loadSection) validate(d *decoder, _ string) {
	if l.Service == "" {
		d.errorf(nil, "load.service", "missing: which service receives the load")
	}
	if len(l.Steps) == 0 {
		d.errorf(nil, "load.steps", "missing: at least one step")
	}
}

// stepSection is one step, or a profile's override of steps: decoded onto
// a copy of a step's section, an override changes what it gives.
type stepSection struct {
	Each        yaml.Node         `yaml:"each"` // expanded before the step is read
	Name        nonEmpty          `yaml:"name"`
	Params      map[string]string `yaml:"params"`
	Fresh       bool              `yaml:"fresh"`
	Interleave  *bool             `yaml:"interleave"`
	TagHeader   nonEmpty          `yaml:"tag_header"`
	Before      []hookTarget      `yaml:"before"`
	Collect     []hookTarget      `yaml:"collect"`
	Events      []eventSection    `yaml:"events"`
	Model       loadModel         `yaml:"model"`
	Users       count             `yaml:"users"`
	Rate        nonNegative       `yaml:"rate"`
	Stages      stages            `yaml:"stages"`
	Arrivals    pacer.Arrivals    `yaml:"arrivals"`
	Pacing      load.Pacing       `yaml:"pacing"`
	Tick        duration          `yaml:"tick"`
	Think       think             `yaml:"think"`
	Connections count             `yaml:"connections"`
	Duration    duration          `yaml:"duration"`
	Requests    count             `yaml:"requests"`
	Iterations  count             `yaml:"iterations"`
	Timeout     duration          `yaml:"timeout"`
	MinSuccess  *nonNegative      `yaml:"min_success"`
	Warmup      warmupSection     `yaml:"warmup"`
	Pause       duration          `yaml:"pause"`
	Targets     []loadTarget      `yaml:"targets"`
}

func (st *stepSection) validate(d *decoder, field string) {
	if st.Name != "" {
		d.fileName(nil, join(field, "name"), "a step's name becomes a file name", string(st.Name))
	}
	if why := st.unsliceable(); why != "" && st.Interleave != nil && *st.Interleave {
		d.errorf(nil, join(field, "interleave"), "this step cannot be measured in slices: %s", why)
	}
}

// unsliceable says why a step must be measured in one piece, not in
// slices taking turns with the other variants: what it measures is tied
// to moments of one load, or to its start; "" when it can be sliced.
func (st *stepSection) unsliceable() string {
	switch {
	case len(st.Events) > 0:
		return "its events happen at moments of one load"
	case st.Fresh:
		return "it meets cold caches (fresh), which only its first slice would"
	case len(st.Stages) > 0:
		return "its rate follows stages"
	case st.Iterations > 0:
		return "each of its users runs a fixed number of iterations"
	}
	return ""
}

// sequential says why a step is measured in one piece: it cannot be
// sliced, or the study file says interleave: false; "" when it is
// interleaved.
func (st *stepSection) sequential() string {
	if why := st.unsliceable(); why != "" {
		return why
	}
	if st.Interleave != nil && !*st.Interleave {
		return "the study file says interleave: false"
	}
	return ""
}

// interleaveSection shapes the slices of the interleaved steps.
type interleaveSection struct {
	Slice  duration `yaml:"slice"`
	Warmup duration `yaml:"warmup"`
	Rounds count    `yaml:"rounds"`
	Idle   string   `yaml:"idle"`
}

func (s *interleaveSection) validate(d *decoder, field string) {
	if s.Slice != 0 && time.Duration(s.Slice) < time.Second {
		d.errorf(nil, join(field, "slice"), "a slice of %v is too short to measure: give 1s or more", time.Duration(s.Slice))
	}
	if s.Idle != "" && s.Idle != "run" && s.Idle != "freeze" {
		d.errorf(nil, join(field, "idle"), "%q: want run (the waiting deployments run on) or freeze (they are stopped until their turn)", s.Idle)
	}
	if w := s.interleaving(); w.Warmup >= w.Slice {
		d.errorf(nil, join(field, "warmup"), "a slice's warm-up (%v) must be shorter than the slice (%v)", w.Warmup, w.Slice)
	}
}

// The shape of slices a study file need not give.
const (
	DefaultSlice       = 5 * time.Second
	DefaultSliceWarmup = 500 * time.Millisecond
	DefaultRounds      = 5
)

// SteadyCycles is how many cycles (an answer and a think time) each user
// of a closed load goes through in a slice, at the least, for the slice
// to measure the load's steady state: with fewer, a slice whose users
// start afresh measures mostly their first wave, sent at once, and a
// warm-up sent by the same users (a lead) leaves measured only those
// whose lead answers came back early (2026-11-27, ipc quick at 200 users:
// 78-119 pages a slice after a lead against 256-282 started afresh). In
// four, every user is measured three times at least, and what the start
// leaves in the window is at most a quarter of it.
const SteadyCycles = 4

func (s *interleaveSection) interleaving() Interleaving {
	return Interleaving{
		Slice:  cmp.Or(time.Duration(s.Slice), DefaultSlice),
		Warmup: cmp.Or(time.Duration(s.Warmup), DefaultSliceWarmup),
		Rounds: cmp.Or(int(s.Rounds), DefaultRounds),
		Freeze: s.Idle == "freeze",
	}
}

type warmupSection struct {
	Duration duration `yaml:"duration"`
	Requests count    `yaml:"requests"`
}

// stepDraft is a step's section as the file gives it, with what its each:
// loop filled in, so that a profile can override it.
type stepDraft struct {
	section stepSection
	vars    map[string]string // the each: values, which join its params
	line    int
}

func (dr *stepDraft) step() *Step {
	sec := &dr.section
	st := &Step{
		Name:       string(sec.Name),
		Params:     sec.Params,
		Warmup:     Warmup{Duration: time.Duration(sec.Warmup.Duration), Requests: int64(sec.Warmup.Requests)},
		Pause:      time.Duration(sec.Pause),
		Fresh:      sec.Fresh,
		TagHeader:  string(sec.TagHeader),
		Sequential: sec.sequential(),
		line:       dr.line,
		Load: loadspec.Spec{
			Open:        sec.Model == "open",
			Users:       int(sec.Users),
			Think:       load.Think(sec.Think),
			Rate:        float64(sec.Rate),
			Stages:      sec.Stages,
			Arrivals:    sec.Arrivals,
			Pacing:      sec.Pacing,
			Tick:        time.Duration(sec.Tick),
			Connections: int(sec.Connections),
			Duration:    time.Duration(sec.Duration),
			Requests:    int64(sec.Requests),
			Iterations:  int(sec.Iterations),
			Timeout:     time.Duration(sec.Timeout),
		},
	}
	st.Interleaved = st.Sequential == ""
	if sec.MinSuccess != nil {
		share := float64(*sec.MinSuccess)
		st.Load.MinSuccess = &share
	}
	if len(dr.vars) > 0 {
		st.Params = maps.Clone(st.Params)
		if st.Params == nil {
			st.Params = map[string]string{}
		}
		maps.Copy(st.Params, dr.vars)
	}
	for _, h := range sec.Before {
		st.Before = append(st.Before, h.target())
	}
	for _, h := range sec.Collect {
		st.Collect = append(st.Collect, h.target())
	}
	for i := range sec.Events {
		st.Events = append(st.Events, sec.Events[i].event())
	}
	for _, t := range sec.Targets {
		st.Targets = append(st.Targets, t.target())
	}
	return st
}

// eventSection is one moment of a step's timeline: {at: 5s, kill: db},
// {at: 2s, request: {…}}, {at: 3s, link: a>b, fault: reset}.
type eventSection struct {
	At      duration    `yaml:"at"`
	Fault   faultName   `yaml:"fault"`
	Delay   duration    `yaml:"delay"`
	Request *loadTarget `yaml:"request"`
	Kill    nonEmpty    `yaml:"kill"`
	Restart nonEmpty    `yaml:"restart"`
	Pause   nonEmpty    `yaml:"pause"`
	Resume  nonEmpty    `yaml:"resume"`
	Link    nonEmpty    `yaml:"link"`
	line    int
}

var eventActions = []string{"request", "kill", "restart", "pause", "resume", "link"}

// actions are the actions the event gives, each with what it acts on.
func (ev *eventSection) actions() [][2]string {
	var out [][2]string
	if ev.Request != nil {
		out = append(out, [2]string{"request", ""})
	}
	for _, a := range [][2]string{{"kill", string(ev.Kill)}, {"restart", string(ev.Restart)}, {"pause", string(ev.Pause)}, {"resume", string(ev.Resume)}, {"link", string(ev.Link)}} {
		if a[1] != "" {
			out = append(out, a)
		}
	}
	return out
}

// validate also notes the event's line, for what is checked once the whole
// study is read (a link event naming no link).
func (ev *eventSection) validate(d *decoder, field string) {
	ev.line = d.lineOf(field)
	actions := ev.actions()
	if len(actions) > 1 {
		d.errorf(nil, join(field, actions[1][0]), "one action per event")
	}
	if len(actions) == 0 || ev.At == 0 {
		d.errorf(nil, field, "an event needs at and one of %s", strings.Join(eventActions, ", "))
		return
	}
	d.linkEvent(field, actions[0][0], ev)
}

func (ev *eventSection) event() *Event {
	out := &Event{At: time.Duration(ev.At), Fault: string(ev.Fault), Delay: time.Duration(ev.Delay), line: ev.line}
	if actions := ev.actions(); len(actions) > 0 {
		out.Action, out.Target = actions[0][0], actions[0][1]
	}
	if ev.Request != nil {
		out.Request = ev.Request.target()
	}
	return out
}

// request is what every kind of target gives: what a load sends
// (loadTarget), what setup sends (setupTarget), and the requests sent to
// every instance of a service around a step (hookTarget).
type request struct {
	Name    nonEmpty      `yaml:"name"`
	Method  method        `yaml:"method"`
	Path    template      `yaml:"path"`
	Headers templatePairs `yaml:"headers"`
	Body    template      `yaml:"body"`
}

func (r *request) validate(d *decoder, field string) {
	switch {
	case r.Path == "":
		d.errorf(nil, field, "a target needs a path")
	case !strings.HasPrefix(string(r.Path), "/"):
		d.errorf(nil, join(field, "path"), "a path starts with /, got %q", r.Path)
	}
	for _, h := range r.Headers {
		if err := load.CheckHeader(h[0], h[1]); err != nil {
			d.errorf(nil, join(join(field, "headers"), h[0]), "%v", err)
		}
	}
}

// target is the Target the request makes, defaults filled in.
func (r *request) target(expect statusSet) *Target {
	t := &Target{
		Name:         string(r.Name),
		Method:       cmp.Or(string(r.Method), "GET"),
		Path:         string(r.Path),
		Header:       r.Headers,
		Body:         string(r.Body),
		Weight:       1,
		ExpectStatus: cmp.Or(string(expect), "2xx"),
	}
	if t.Name == "" {
		t.Name = t.Method + " " + t.Path
	}
	return t
}

type loadTarget struct {
	request      `yaml:",inline"`
	Form         templatePairs `yaml:"form"`
	Weight       count         `yaml:"weight"`
	ExpectStatus statusSet     `yaml:"expect_status"`
	ExpectBody   string        `yaml:"expect_body"`
}

func (lt *loadTarget) target() *Target {
	t := lt.request.target(lt.ExpectStatus)
	t.Form, t.ExpectBody, t.Weight = lt.Form, lt.ExpectBody, max(int(lt.Weight), 1)
	return t
}

type setupTarget struct {
	Each         yaml.Node `yaml:"each"` // expanded before the target is read
	request      `yaml:",inline"`
	Form         templatePairs `yaml:"form"`
	ExpectStatus statusSet     `yaml:"expect_status"`
	Capture      pairs         `yaml:"capture"` // placeholder key → top-level field of the answer
}

func (st *setupTarget) target() *Target {
	t := st.request.target(st.ExpectStatus)
	t.Form, t.Capture = st.Form, st.Capture
	return t
}

type hookTarget struct {
	request      `yaml:",inline"`
	Service      nonEmpty  `yaml:"service"`
	ExpectStatus statusSet `yaml:"expect_status"`
}

func (h *hookTarget) target() *Target {
	t := h.request.target(h.ExpectStatus)
	t.Service = string(h.Service)
	return t
}

type profileSection struct {
	Repetitions count             `yaml:"repetitions"`
	Variants    byName[[]string]  `yaml:"variants"` // axis → the values kept
	Only        []string          `yaml:"only"`     // keys of the variants kept, after variants:
	AA          *yaml.Node        `yaml:"aa"`
	Baseline    *yaml.Node        `yaml:"baseline"`
	Steps       byName[yaml.Node] `yaml:"steps"` // step name or glob → override
	Skip        []string          `yaml:"skip"`  // globs of steps to drop
}

type linkSection struct {
	From      nonEmpty      `yaml:"from"`
	To        nonEmpty      `yaml:"to"`
	Latency   linkLatency   `yaml:"latency"`
	Jitter    linkLatency   `yaml:"jitter"`
	Bandwidth linkBandwidth `yaml:"bandwidth"`
}

func (l *linkSection) validate(d *decoder, field string) {
	if l.From == "" || l.To == "" {
		d.errorf(nil, field, "a link needs from and to")
	}
}

// A study file's tokens: field declares JSON Web Tokens msbench mints with
// a fresh key for every run, for services to verify and the load to send:
//
//	tokens:
//	  user:
//	    algorithm: HS256
//	    expires: 8760h
//	    claims: {sub: msbench, authorities: [ROLE_USER], aud: lab}
//
// {tokens.user.token} is the token; {tokens.user.secret} the HMAC key
// (HS*), {tokens.user.public_key} the RSA public key in PEM (RS256).
type tokenSection struct {
	Algorithm algorithm `yaml:"algorithm"`
	Expires   duration  `yaml:"expires"`
	Claims    claims    `yaml:"claims"`
}

func (t *tokenSection) validate(d *decoder, field string) {
	if t.Algorithm == "" {
		d.errorf(nil, field, "missing algorithm: one of %s", strings.Join(tokens.Algorithms, ", "))
	}
}

type datasetSection struct {
	File      nonEmpty `yaml:"file"`      // in the shared data directory
	Otherwise template `yaml:"otherwise"` // the stand-in, made by a build
}

func (ds *datasetSection) validate(d *decoder, field string) {
	if file := string(ds.File); file != "" && (filepath.IsAbs(file) || !filepath.IsLocal(file)) {
		d.errorf(nil, join(field, "file"), "a path inside the shared data directory, without ..")
	}
	for _, m := range placeholder.Pattern.FindAllStringSubmatch(string(ds.Otherwise), -1) {
		if m[1] != "root" && m[1] != "data" && !strings.HasPrefix(m[1], "build.") {
			d.errorf(nil, join(field, "otherwise"), "{%s}: a stand-in is found before anything starts: only {root}, {data} and {build.NAME} are known then", m[1])
		}
	}
	if ds.File == "" || ds.Otherwise == "" {
		d.errorf(nil, field, "a dataset needs file (in the shared data directory) and otherwise (the stand-in made when it is absent)")
	}
}
