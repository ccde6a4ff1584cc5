package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"

	"go-micro.dev/v5/client"
	merrors "go-micro.dev/v5/errors"

	"github.com/msbench/msbench/studies/frameworks/services/micro/api"
)

// maxBody is the largest request body the gateway reads (and drops): no
// route takes one (see dropBody).
const maxBody = 100 << 10

// name is the id of the gateway's own errors.
const name = "gateway"

type gateway struct {
	client   client.Client
	verifier *verifier
}

func (g *gateway) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", g.hello)
	mux.Handle("GET /universities", g.verifier.require(http.HandlerFunc(g.universities)))
	mux.HandleFunc("GET /ready", g.ready)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, merrors.NotFound(name, "no route for %s %s", r.Method, r.URL.Path))
	})
	return dropBody(mux)
}

func (g *gateway) hello(w http.ResponseWriter, r *http.Request) {
	var rsp api.HelloResponse
	req := g.client.NewRequest(api.HelloService, "Hello.Say", &api.HelloRequest{})
	if err := g.client.Call(r.Context(), req, &rsp); err != nil {
		writeError(w, upstream(err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, rsp.Message)
}

func (g *gateway) universities(w http.ResponseWriter, r *http.Request) {
	var rsp api.FindResponse
	req := g.client.NewRequest(api.UniversitiesService, "Universities.Find", &api.FindRequest{Country: r.URL.Query().Get("country")})
	if err := g.client.Call(r.Context(), req, &rsp); err != nil {
		writeError(w, upstream(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(rsp.Universities)
}

// ready answers 200 once the registry names a node of every service the
// gateway calls, so that its routes can be served.
func (g *gateway) ready(w http.ResponseWriter, _ *http.Request) {
	for _, svc := range []string{api.HelloService, api.UniversitiesService} {
		if _, err := g.client.Options().Selector.Select(svc); err != nil {
			writeError(w, merrors.New(name, svc+": "+err.Error(), http.StatusServiceUnavailable))
			return
		}
	}
	io.WriteString(w, "ready\n")
}

// upstream turns a failed call into the gateway's answer: 504 when
// go-micro's client gave up waiting (by its defaults, 5 s an attempt and
// 5 retries within 30 s; the services README), 502 otherwise.
func upstream(err error) error {
	e := merrors.FromError(err)
	if e.Code == http.StatusRequestTimeout {
		e.Code = http.StatusGatewayTimeout
	} else {
		e.Code = http.StatusBadGateway
	}
	return e
}

// writeError answers with go-micro's error (made by its errors package),
// as JSON.
func writeError(w http.ResponseWriter, err error) {
	e := merrors.FromError(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(e.Code))
	io.WriteString(w, e.Error())
}

// dropBody reads and discards the request body, up to maxBody, before the
// handler runs. net/http notices a body's faults only when it is read, so
// unread, a body too large, malformed or cut short would be answered 200
// (the last only after READ_TIMEOUT). A request without a body, the study's
// case, costs one comparison.
func dropBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			var err error
			if r.ContentLength > maxBody {
				err = &http.MaxBytesError{Limit: maxBody}
			} else {
				_, err = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody))
			}
			if err != nil {
				// The rest of the body cannot be told from a next request.
				// Saying so also keeps net/http from reading it before
				// answering.
				w.Header().Set("Connection", "close")
				writeError(w, bodyError(err))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return merrors.New(name, "request body over 100 KiB", http.StatusRequestEntityTooLarge)
	case errors.As(err, &netErr) && netErr.Timeout():
		return merrors.New(name, "request body not received in time", http.StatusRequestTimeout)
	}
	return merrors.BadRequest(name, "request body: %v", err)
}
