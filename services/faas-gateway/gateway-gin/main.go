// Command gateway-gin is the gateway on Gin, in release mode and without
// Gin's per-request logger, so logging does not weigh on the measurement.
package main

import (
	"net"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/msbench/msbench/services/faas-gateway/gateway"
)

func serve(g *gateway.Gateway, ln net.Listener) error {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET(gateway.HealthPath, func(c *gin.Context) {
		c.String(http.StatusOK, gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		r.GET(ep.Path, handler(g, ep))
	}
	return r.RunListener(ln)
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) gin.HandlerFunc {
	return func(c *gin.Context) {
		res := g.Handle(c.Request.Context(), ep, c.Query)
		c.Header(gateway.TimingHeader, res.Timing)
		c.Data(res.Status, res.ContentType, res.Body)
	}
}

func main() {
	gateway.Main("gin", serve)
}
