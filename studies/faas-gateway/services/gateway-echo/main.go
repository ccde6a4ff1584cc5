// Command gateway-echo is the gateway on Echo v4.
package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

func newServer(g *gateway.Gateway, l gateway.Limits) gateway.Server {
	e := echo.New()
	e.GET(gateway.HealthPath, func(c echo.Context) error {
		return c.String(http.StatusOK, gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		e.GET(ep.Path, handler(g, ep))
	}
	// Echo's "custom server" way: e is the Handler of an http.Server.
	// (e.Start would set e.Server.Handler to e itself, dropping the body
	// check around it.)
	return gateway.HTTPServer(e, l)
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := g.Handle(c.Request().Context(), ep, c.QueryParam)
		c.Response().Header().Set(gateway.TimingHeader, res.Timing)
		return c.Blob(res.Status, res.ContentType, res.Body)
	}
}

func main() {
	gateway.Main("echo", newServer)
}
