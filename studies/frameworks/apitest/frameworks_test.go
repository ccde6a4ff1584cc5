package apitest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/hostile"
	"github.com/msbench/msbench/internal/runner/deploytest"
)

// frameworks are the three systems under test, and what the test knows of
// each that the study file does not say: its toolchain, and the limits of
// its HTTP servers that cannot be configured.
func frameworks() []framework {
	return []framework{
		{
			name: "spring",
			// Four JVMs on two cores: the authors' loading only.
			loads: []string{"per-request"},
			// Startup speed over peak speed: the test measures nothing.
			env:   map[string]string{"JAVA_OPTS": "-XX:TieredStopAtLevel=1"},
			tools: []string{"mvn"},
			jdk:   25,
			hostile: func(cases []hostile.Case) []hostile.Case {
				for i, c := range cases {
					if c.Name == "oversized chunked body" {
						// Spring Cloud Gateway's RequestSize filter judges
						// the declared Content-Length only; a chunked body
						// streams through to the service, which ignores a
						// GET's body.
						cases[i].Statuses = []int{http.StatusOK}
					}
				}
				// Reactor Netty bounds no request's header as a whole, only
				// the silence between its bytes (server.netty.idle-timeout):
				// a drip keeps it open.
				return slices.DeleteFunc(cases, func(c hostile.Case) bool { return c.Name == "slow headers" })
			},
			backends: []backend{
				{name: "eureka", method: http.MethodGet, path: "/eureka/apps"},
				{name: "hello", method: http.MethodGet, path: "/"},
				{name: "universities", method: http.MethodGet, path: "/universities?country=Finland"},
			},
			backendLimits: limits,
			backendHostile: func(cases []hostile.Case) []hostile.Case {
				for i, c := range cases {
					switch c.Name {
					case "oversized header":
						// Tomcat's answer to a header over its limit.
						cases[i].Statuses = []int{http.StatusBadRequest}
					case "body shorter than its length", "malformed chunked body", "oversized body", "oversized chunked body":
						// Tomcat answers a GET at once, without reading its
						// body, which no controller reads, and then discards
						// or closes what comes after.
						cases[i].Statuses, cases[i].Limit = []int{http.StatusOK}, 0
					}
				}
				// Tomcat bounds a header by its count of fields (100), not
				// by time: a drip ends after 100 of them, as fast as they
				// come.
				return slices.DeleteFunc(cases, func(c hostile.Case) bool { return c.Name == "slow headers" })
			},
		},
		{
			name:  "nest",
			loads: []string{"startup", "per-request"},
			tools: []string{"node", "npm"},
			// Nest's shutdown hooks raise the signal again once the
			// application is closed.
			stop: []deploytest.StopOption{deploytest.DiesBySIGTERM()},
			hostile: func(cases []hostile.Case) []hostile.Case {
				for i, c := range cases {
					if c.Name == "oversized body" {
						// Express answers an error only once the request has
						// been read (finalhandler waits for its end, not to
						// reset a client still sending): a body declared too
						// large and never sent is cut by Node's
						// requestTimeout instead.
						cases[i].Statuses, cases[i].Limit = []int{http.StatusRequestTimeout}, readTimeout
					}
				}
				return cases
			},
		},
		{
			name:    "micro",
			loads:   []string{"per-request", "startup"},
			tools:   []string{"go"},
			hostile: func(cases []hostile.Case) []hostile.Case { return cases },
			// go-micro's RPC over its HTTP transport: a POST to / naming
			// the service and endpoint, the body the request in JSON.
			backends: []backend{
				{name: "hello", method: http.MethodPost, path: "/",
					header: [][2]string{{"Micro-Service", "hello"}, {"Micro-Endpoint", "Hello.Say"}}, body: "{}"},
				{name: "universities", method: http.MethodPost, path: "/",
					header: [][2]string{{"Micro-Service", "universities"}, {"Micro-Endpoint", "Universities.Find"}}, body: `{"country":"Finland"}`},
			},
			// The services' transport bounds a request, header and body
			// together, by READ_TIMEOUT from its first byte to its declared end and by
			// microMaxRequest bytes (services/micro/platform).
			backendLimits: hostile.Limits{ReadHeader: readTimeout, Read: readTimeout, MaxBody: microMaxRequest},
			backendHostile: func(cases []hostile.Case) []hostile.Case {
				for i, c := range cases {
					switch c.Name {
					case "body shorter than its length", "oversized body":
						// go-micro's transport reads the body whole before
						// it serves the call, and answers a body it could
						// not read 500 with the error: here the request's
						// deadline. A declared length is not judged.
						cases[i].Statuses, cases[i].Reason, cases[i].Limit = []int{http.StatusInternalServerError}, "i/o timeout", readTimeout
					case "malformed chunked body":
						cases[i].Statuses, cases[i].Reason = []int{http.StatusInternalServerError}, "chunk"
					case "oversized chunked body":
						cases[i].Statuses, cases[i].Reason = []int{http.StatusInternalServerError}, "request over"
					case "oversized header":
						// The standard 32 KiB header is within a request's
						// bytes; one over them is refused by net/http, which
						// reads it (go-micro's http.Server allows 1 MB), 400,
						// closing at once: a client still sending may get a
						// reset instead.
						cases[i].Request = strings.Replace(c.Request, strings.Repeat("a", 32<<10), strings.Repeat("a", microMaxRequest), 1)
						cases[i].Statuses = []int{0, http.StatusBadRequest}
					}
				}
				return cases
			},
		},
	}
}

// TestFrameworks deploys each framework's variants of the study (with
// both UNIVERSITIES_LOAD modes, Spring's only with its authors') and
// checks its API through the gateway. The frameworks run side by side,
// their variants one after another.
func TestFrameworks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the three frameworks' programs")
	}
	ctx := t.Context()
	fws := frameworks()
	// The lab builds every framework it is given: one whose toolchain is
	// missing would fail them all.
	missing := map[string]string{}
	for _, fw := range fws {
		if why := fw.missing(); why != "" {
			missing[fw.name] = why
		}
	}
	lab := deploytest.Open(ctx, t, "../study.yaml", "", deploytest.WithoutBuilds(slices.Sorted(maps.Keys(missing))...))
	data := loadDataset(t, lab.Values()["dataset.universities"])
	for _, fw := range fws {
		t.Run(fw.name, func(t *testing.T) {
			if why := missing[fw.name]; why != "" {
				t.Skipf("skipping %s: this machine lacks %s", fw.name, why)
			}
			t.Parallel()
			for _, load := range fw.loads {
				t.Run("load="+load, func(t *testing.T) {
					d := deploy(ctx, t, lab, fw, load, data)
					checkAPI(t, d, data)
					d.stop(t)
				})
			}
		})
	}
}
