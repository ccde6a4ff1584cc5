// Package gateway is what the five framework gateways share: parameter
// parsing and validation, the RPC call, the mapping of failures to HTTP
// status codes and the Server-Timing header. A framework's main only routes
// requests to Handle and writes the Response, so the frameworks differ in
// nothing but their own HTTP machinery.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/rpcclient"
)

// Readiness endpoint: answered by the framework alone, without RPC.
const (
	HealthPath = "/healthz"
	HealthBody = "ok"
)

const textPlain = "text/plain; charset=utf-8"

// Endpoint is one function endpoint.
type Endpoint struct {
	Path        string
	method      string
	contentType string
	// args builds the call arguments from the query; nil means the
	// function takes none.
	args func(g *Gateway, query func(string) string) (function.Args, error)
}

// Endpoints lists the function endpoints every gateway serves with GET.
var Endpoints = []Endpoint{
	{Path: "/empty", method: function.MethodEmpty, contentType: textPlain},
	{Path: "/sleep", method: function.MethodSleep, contentType: textPlain},
	{Path: "/math", method: function.MethodMath, contentType: textPlain, args: mathArgs},
	{Path: "/image", method: function.MethodImage, contentType: "image/png"},
}

// Response is what a framework writes back: status, Content-Type, body and
// the TimingHeader value.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	Timing      string
}

// Gateway turns HTTP requests into function calls.
type Gateway struct {
	client   *rpcclient.Client
	maxMathN uint64
}

// New returns a Gateway for cfg. It does not contact the RPC server.
func New(cfg Config) (*Gateway, error) {
	client, err := rpcclient.New(cfg.RPC)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return &Gateway{client: client, maxMathN: cfg.MaxMathN}, nil
}

// Close releases the gateway's RPC connections.
func (g *Gateway) Close() error {
	return g.client.Close()
}

// Handle serves one request to ep. query looks up a URL query parameter; each
// framework passes its own accessor. The handler duration runs from the call
// of Handle to the moment the Response is ready to be written.
func (g *Gateway) Handle(ctx context.Context, ep Endpoint, query func(string) string) Response {
	start := time.Now()
	var t timing
	finish := func(status int, contentType string, body []byte) Response {
		t.handler = time.Since(start)
		return Response{Status: status, ContentType: contentType, Body: body, Timing: t.header()}
	}
	fail := func(status int, err error) Response {
		return finish(status, textPlain, []byte(err.Error()+"\n"))
	}

	var args function.Args
	if ep.args != nil {
		var err error
		if args, err = ep.args(g, query); err != nil {
			return fail(http.StatusBadRequest, err)
		}
	}
	reply, rpcDur, err := g.client.Call(ctx, ep.method, args)
	// What the call took beyond the RPC itself happened before sending it:
	// parsing, and under PolicyDial the connection set-up.
	t.pre, t.rpc, t.rpcSet = time.Since(start)-rpcDur, rpcDur, rpcDur > 0
	if err != nil {
		return fail(rpcStatus(err), err)
	}
	t.fn, t.fnSet = time.Duration(reply.FnNanos), true
	return finish(http.StatusOK, ep.contentType, reply.Body)
}

func mathArgs(g *Gateway, query func(string) string) (function.Args, error) {
	raw := query("n")
	if raw == "" {
		return function.Args{}, errors.New("missing query parameter n (number of Monte Carlo samples)")
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return function.Args{}, fmt.Errorf("n must be an unsigned 64-bit integer, got %q", raw)
	}
	if n == 0 {
		return function.Args{}, errors.New("n must be at least 1")
	}
	if n > g.maxMathN {
		return function.Args{}, fmt.Errorf("n=%d is above the limit of %d samples (MATH_MAX_N)", n, g.maxMathN)
	}
	return function.Args{N: n}, nil
}

// rpcStatus maps a failed call to a status: 503 when the RPC server cannot be
// reached, 504 when the call ran out of time, 502 for everything else the
// function or the connection got wrong.
func rpcStatus(err error) int {
	switch {
	case errors.Is(err, rpcclient.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}
