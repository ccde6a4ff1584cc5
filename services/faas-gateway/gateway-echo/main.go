// Command gateway-echo is the gateway on Echo v4.
package main

import (
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/msbench/msbench/services/faas-gateway/gateway"
)

func serve(g *gateway.Gateway, ln net.Listener) error {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.GET(gateway.HealthPath, func(c echo.Context) error {
		return c.String(http.StatusOK, gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		e.GET(ep.Path, handler(g, ep))
	}
	// Echo serves on e.Listener when it is set; the address is then unused.
	e.Listener = ln
	return e.Start("")
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := g.Handle(c.Request().Context(), ep, c.QueryParam)
		c.Response().Header().Set(gateway.TimingHeader, res.Timing)
		return c.Blob(res.Status, res.ContentType, res.Body)
	}
}

func main() {
	gateway.Main("echo", serve)
}
