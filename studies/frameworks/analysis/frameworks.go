// Package frameworks is the frameworks study's analysis: Spring Boot with
// Spring Cloud, NestJS and go-micro serving the thesis' two applications
// (Hello World, Universities) at its two loads, judged as the thesis
// measured them (median and p95 request duration, success with k6's
// pause-as-timeout rule, CPU time and peak memory of every process of a
// deployment) and with what msbench adds: success without the pause rule,
// the first requests after start apart from steady state, the dataset
// loaded per request or at start, and CPU per request.
package frameworks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/analysis"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func init() { analysis.Register("frameworks", frameworksAnalysis{}) }

type frameworksAnalysis struct{}

// The values of the framework and load axes the claims name.
const (
	spring = "spring"
	nest   = "nest"
	micro  = "micro"

	perRequest = "per-request"
	atStart    = "startup"
)

// The values of the steps' app and level parameters the claims name.
const (
	hello        = "hello"
	universities = "universities"
	low          = "low"
	high         = "high"
)

// frameworkOrder is the order of tables and the colours of charts.
var frameworkOrder = []string{spring, nest, micro}

// authorsLoad is how the thesis' authors loaded the dataset: Spring and
// Micro re-parsed it for every request, Nest read it once at start. The
// claims are judged on these variants.
var authorsLoad = map[string]string{spring: perRequest, nest: atStart, micro: perRequest}

// otherLoad is the loading the authors did not use.
func otherLoad(fw string) string {
	if authorsLoad[fw] == perRequest {
		return atStart
	}
	return perRequest
}

// firstN is how many requests of a step count as its first: with the
// thesis' low load, the first request of each of the 10 users, sent
// together right after the start.
const firstN = 10

var (
	apps   = []string{hello, universities}
	levels = []string{low, high}
)

func (frameworksAnalysis) Needs() study.Needs {
	steps := []study.StepNeed{{Params: []string{"app", "level", "pause"}, For: "every step: which application, which of the thesis' loads, and the pause k6 used as the time-out"}}
	for _, app := range apps {
		for _, lvl := range levels {
			steps = append(steps, study.StepNeed{Where: map[string]string{"app": app, "level": lvl}, For: "the thesis' " + app + " test at " + lvl + " load"})
		}
	}
	return study.Needs{Axes: []string{"framework", "load"}, Steps: steps, Metrics: metricIDs()}
}

// fcase is one step: an application at a load, with the pause after each
// request that k6 also used as the request's time-out.
type fcase struct {
	app, level string
	step       *study.Step
	pauseMs    float64
}

func (c *fcase) label() string { return c.app + " " + c.level }

// fwRun is a run read for the analysis: its steps, and what each unit's
// records showed, each records file read once.
type fwRun struct {
	ds    *analysis.Dataset
	cases []*fcase
	// first is, per application, its first step in the order the steps
	// ran: the one that meets the deployment right after its start.
	first map[string]*fcase
	stats map[*analysis.Unit]*recStats
	// unreadable names the units whose records could not be read.
	unreadable []string
	// skipped are the steps and variants the profile left out; planErr
	// says why they could not be told.
	skipped []string
	planErr error
}

func newRun(ds *analysis.Dataset) (*fwRun, error) {
	r := &fwRun{ds: ds, first: map[string]*fcase{}, stats: map[*analysis.Unit]*recStats{}}
	for _, st := range ds.Study.Load.Steps {
		pause, err := time.ParseDuration(st.Params["pause"])
		if err != nil || pause <= 0 {
			return nil, fmt.Errorf("step %s: pause %q is not a duration such as 1s or 500ms", st.Name, st.Params["pause"])
		}
		c := &fcase{app: st.Params["app"], level: st.Params["level"], step: st, pauseMs: float64(pause) / 1e6}
		r.cases = append(r.cases, c)
		if _, seen := r.first[c.app]; !seen {
			r.first[c.app] = c
		}
	}
	r.skipped, r.planErr = ds.SkippedSteps(nil)
	if variants, err := ds.SkippedVariants(); err == nil {
		r.skipped = append(r.skipped, variants...)
	}
	r.readRecords()
	return r, nil
}

// at is the step of an application at a load, nil when the run has none.
func (r *fwRun) at(app, level string) *fcase {
	for _, c := range r.cases {
		if c.app == app && c.level == level {
			return c
		}
	}
	return nil
}

// key is the variant of a framework with a loading, "" when the run has
// none.
func (r *fwRun) key(fw, load string) string {
	v, ok := r.ds.Variant(map[string]string{"framework": fw, "load": load})
	if !ok {
		return ""
	}
	return v.Key()
}

// variantRow is one variant in table order: each framework with its
// authors' loading, then with the other.
type variantRow struct {
	fw, load, key string
}

func (v variantRow) authors() bool { return authorsLoad[v.fw] == v.load }

// datasetText says which universities list was measured: the thesis' own
// snapshot, or the study's stand-in when the shared file was absent.
func datasetText(f results.DatasetFile) string {
	switch f.Source {
	case results.DatasetShared:
		return fmt.Sprintf("The dataset is the thesis' 2021 snapshot of the university list (%s, %d bytes).", f.Path, f.Bytes)
	case results.DatasetGenerated:
		return fmt.Sprintf("The dataset is generated, not the thesis' snapshot, which was absent from the shared data directory: the study's stand-in of the same shape and size (9,691 records over 205 countries, Finland's 33 among them; %d bytes). Parsing costs as the snapshot's would; the names and domains are made up.", f.Bytes)
	}
	return "This run did not record which dataset it used (it predates datasets in the provenance)."
}

// loadText says how a variant loads the dataset, marking the authors'.
func (v variantRow) loadText() string {
	s := v.load
	if v.authors() {
		s += " (authors')"
	}
	return s
}

// variants are the run's variants in table order; frameworks the axes do
// not know come last, as they are.
func (r *fwRun) variants() []variantRow {
	var out []variantRow
	fws := slices.Clone(frameworkOrder)
	for _, fw := range r.ds.AxisValues("framework") {
		if !slices.Contains(fws, fw) {
			fws = append(fws, fw)
		}
	}
	for _, fw := range fws {
		loads := []string{authorsLoad[fw], otherLoad(fw)}
		for _, l := range r.ds.AxisValues("load") {
			if !slices.Contains(loads, l) {
				loads = append(loads, l)
			}
		}
		for _, l := range loads {
			if k := r.key(fw, l); k != "" {
				out = append(out, variantRow{fw, l, k})
			}
		}
	}
	return out
}

// notMeasured is the sentence a section adds for what it could not show:
// the steps and variants the profile left out, the variants the run lacks
// a step of, and the frameworks the claims compare that the run has not.
func (r *fwRun) notMeasured() string {
	what := slices.Clone(r.skipped)
	for _, fw := range frameworkOrder {
		if r.planErr != nil && r.key(fw, authorsLoad[fw]) == "" {
			what = append(what, fw+"-"+authorsLoad[fw]+" (not in this run's variants)")
		}
	}
	for _, app := range apps {
		for _, lvl := range levels {
			if r.at(app, lvl) == nil && r.planErr != nil {
				what = append(what, "the "+app+" test at "+lvl+" load (no such step in this run)")
			}
		}
	}
	what = append(what, r.ds.Unmeasured(r.ds.Steps(nil))...)
	return analysis.NotMeasured(what)
}

func (frameworksAnalysis) Analyze(ds *analysis.Dataset) (analysis.Result, error) {
	r, err := newRun(ds)
	if err != nil {
		return analysis.Result{}, err
	}
	sections := []analysis.Section{r.intro()}
	for _, f := range []func() (analysis.Section, error){r.durationSection, r.successSection, r.resourcesSection, r.warmupSection, r.loadingSection, r.retriesSection} {
		sec, err := f()
		if err != nil {
			return analysis.Result{}, err
		}
		sections = append(sections, sec)
	}
	for i := range sections { // a sentence with nothing to say is left out
		sections[i].Text = slices.DeleteFunc(sections[i].Text, func(p string) bool { return p == "" })
	}
	return analysis.Result{Sections: sections, Metrics: r.metrics()}, nil
}

func (r *fwRun) intro() analysis.Section {
	sec := analysis.Section{
		Title: "What is compared",
		Text: []string{
			"Two applications written once per framework, each the way its framework's documentation teaches (services/README.md): Hello World (the gateway asks a hello service for \"Hello World!\") and Universities (the gateway verifies an HS256 JWT and asks a universities service for Finland's records of the 2 MB university list). " +
				"Spring: Spring Cloud Gateway, hello and universities on Spring MVC, and a Eureka server they register with (four JVMs, JDK 25 with its defaults). Nest: gateway, hello and universities, the gateway calling the services over Nest's microservices TCP transport at fixed addresses (three Node processes). " +
				"Micro: gateway, hello and universities built with go-micro v5, calling each other over go-micro RPC, and a NATS server as the registry (four processes). Every process of a deployment is measured: the registry (Eureka, NATS) counts in CPU and memory like the others.",
			"Which Micro: the thesis measured the Micro platform v3 (micro server: registry, broker, network, runtime, config, store, events, auth, proxy and API as processes, services run from source by its runtime, auth rules on Universities). " +
				"It could not be run here: its ports are fixed and on every interface (two deployments cannot run side by side, nor on the free loopback ports msbench gives), its runtime builds services from source at start, and its auth issues and checks only its own RS256 tokens. " +
				"The project has since become go-micro v5, a library; this deployment is what its documentation teaches for a gateway in front of services, with NATS as the registry because the default mDNS needs multicast, which a loopback-only host does not route. " +
				"So this Micro has no platform services beyond a registry, no auth service, no runtime building from source and no proxy hop: one RPC hop, as in the other two. Figures the thesis measured on Micro v3 are judged on this go-micro, and a difference may be that difference.",
			"The authors' applications were not identical either, as they said themselves (Micro was three months old, and JSON favoured Nest); in particular their Spring and Micro re-parsed the dataset for every request while their Nest read it once at start. " +
				"The load axis runs every framework both ways; the claims are judged on each framework with its authors' loading (spring-" + perRequest + ", nest-" + atStart + ", micro-" + perRequest + "), compared side by side within each repetition, and the other loading is shown beside it.",
			"Load as the thesis' k6 scripts: low = 10 users × 10 iterations with a 1 s pause after each request; high = 100 users sharing 10,000 iterations with a 0.5 s pause (the profile may cut the number). " +
				"k6 counted a request as successful only if it was answered 200 within the pause; msbench keeps every answer (its own time-out is 30 s), so success is given both ways. " +
				"Steps run in the study's order on one deployment per variant and repetition, so each application's first step meets services that have just started: the first requests are reported apart.",
		},
	}
	sec.Text = append(sec.Text, datasetText(r.ds.Prov.Datasets["universities"]))
	for _, c := range r.cases {
		if th := c.step.Load.Think; th.Min != th.Max || float64(th.Min)/1e6 != c.pauseMs {
			sec.Text = append(sec.Text, fmt.Sprintf("Step %s pauses %v–%v after each request, but its pause parameter (k6's time-out here) is %v ms: success within the pause is judged on the parameter.", c.step.Name, th.Min, th.Max, c.pauseMs))
		}
	}
	if r.planErr != nil {
		sec.Text = append(sec.Text, "Could not read the study file as run ("+r.planErr.Error()+"), so the steps and variants the profile left out are not named below.")
	}
	if len(r.unreadable) > 0 {
		sec.Text = append(sec.Text, "Records that could not be read (success, warm-up and the first requests are not shown for them): "+strings.Join(r.unreadable, "; ")+".")
	}
	return sec
}

// paperText formats a published figure for a table: "–" when the thesis
// gave none.
func paperText(x float64, format func(float64) string) string {
	if x != x {
		return "–"
	}
	return format(x)
}
