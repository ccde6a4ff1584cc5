// Command gateway-gin is the gateway on Gin, in release mode and without
// Gin's per-request logger, so logging does not weigh on the measurement.
package main

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

func newServer(g *gateway.Gateway, l gateway.Limits) gateway.Server {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET(gateway.HealthPath, func(c *gin.Context) {
		c.String(http.StatusOK, gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		r.GET(ep.Path, handler(g, ep))
	}
	// Gin's documentation sets server timeouts on an http.Server around
	// the engine rather than through r.Run.
	return gateway.HTTPServer(r, l)
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) gin.HandlerFunc {
	return func(c *gin.Context) {
		res := g.Handle(c.Request.Context(), ep, c.Query)
		c.Header(gateway.TimingHeader, res.Timing)
		c.Data(res.Status, res.ContentType, res.Body)
	}
}

func main() {
	gateway.Main("gin", newServer)
}
