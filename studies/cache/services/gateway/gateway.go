package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/msbench/msbench/studies/cache/services/internal/web"
)

const (
	dialTimeout = 2 * time.Second
	// responseTimeout bounds the wait for an upstream's answer header, so a
	// hung instance costs 502 after this long, not a request stuck forever.
	responseTimeout = 10 * time.Second
	// idlePerUpstream is how many kept-alive connections to one upstream may
	// wait for reuse. Go's default of 2 would make a gateway under a hundred
	// concurrent requests dial and close connections all the time.
	idlePerUpstream = 256
)

// forwardingHeaders are end-to-end headers that ReverseProxy's Rewrite drops
// from the incoming request; the gateway passes them on like any other.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// gateway passes each request to the next upstream in turn, without
// retrying elsewhere: a request whose upstream is down is answered 502, so
// the study sees every failure a client would.
type gateway struct {
	upstreams []*upstream
	next      atomic.Uint64
}

func newGateway(upstreams []*upstream) *gateway {
	// One transport for all upstreams, so keep-alive connections are
	// pooled in one place.
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   idlePerUpstream,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: responseTimeout,
	}
	for _, u := range upstreams {
		target := &url.URL{Scheme: "http", Host: u.addr}
		u.proxy = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host
				for _, h := range forwardingHeaders {
					if v, ok := pr.In.Header[h]; ok {
						pr.Out.Header[h] = v
					}
				}
			},
			Transport: transport,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if r.Context().Err() != nil {
					return // the client left; nobody to answer, no fault of the upstream
				}
				u.failures.Add(1)
				web.Error(w, http.StatusBadGateway, fmt.Sprintf("upstream %s: %v", u.addr, err))
			},
		}
	}
	return &gateway{upstreams: upstreams}
}

func (g *gateway) routes() http.Handler {
	mux := http.NewServeMux()
	// Readiness of the gateway itself: it asks no upstream.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		web.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /gateway/stats", g.stats)
	mux.HandleFunc("POST /gateway/stats/reset", func(w http.ResponseWriter, _ *http.Request) {
		for _, u := range g.upstreams {
			u.requests.Store(0)
			u.failures.Store(0)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", g.forward)
	return mux
}

func (g *gateway) forward(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		// Read first, as web.Serve limits it: a body too large, malformed or
		// cut short is the client's fault, which ReverseProxy would blame
		// on the upstream (502); and no upstream waits on a slow client.
		// Bodies are small JSON objects.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			status, reason := bodyError(err)
			web.Error(w, status, "request body: "+reason)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.TransferEncoding = nil // sent with its length now
	}
	u := g.upstreams[(g.next.Add(1)-1)%uint64(len(g.upstreams))]
	u.requests.Add(1)
	u.proxy.ServeHTTP(w, r)
}

// bodyError says why reading a request body failed, in the client's terms.
func bodyError(err error) (status int, reason string) {
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("over %d bytes", tooBig.Limit)
	case errors.As(err, &netErr) && netErr.Timeout():
		return http.StatusRequestTimeout, "not received in time"
	}
	return http.StatusBadRequest, err.Error()
}

type upstreamStats struct {
	Addr     string `json:"addr"`
	Requests int64  `json:"requests"`
	Failures int64  `json:"failures"`
}

func (g *gateway) stats(w http.ResponseWriter, _ *http.Request) {
	out := struct {
		Requests  int64           `json:"requests"`
		Upstreams []upstreamStats `json:"upstreams"`
	}{Upstreams: []upstreamStats{}}
	for _, u := range g.upstreams {
		s := upstreamStats{Addr: u.addr, Requests: u.requests.Load(), Failures: u.failures.Load()}
		out.Requests += s.Requests
		out.Upstreams = append(out.Upstreams, s)
	}
	web.JSON(w, http.StatusOK, out)
}
