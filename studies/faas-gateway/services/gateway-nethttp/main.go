// Command gateway-nethttp is the baseline gateway: the standard library's
// http.ServeMux with method patterns, no framework.
package main

import (
	"net/http"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

func handler(g *gateway.Gateway, ep gateway.Endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res := g.Handle(r.Context(), ep, r.URL.Query().Get)
		w.Header().Set(gateway.TimingHeader, res.Timing)
		w.Header().Set("Content-Type", res.ContentType)
		w.WriteHeader(res.Status)
		w.Write(res.Body)
	}
}

func newServer(g *gateway.Gateway, l gateway.Limits) gateway.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+gateway.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(gateway.HealthBody))
	})
	for _, ep := range gateway.Endpoints {
		mux.HandleFunc("GET "+ep.Path, handler(g, ep))
	}
	return gateway.HTTPServer(mux, l)
}

func main() {
	gateway.Main("nethttp", newServer)
}
