// Command gateway-iris is the gateway on Iris v12.
package main

import (
	"net"

	"github.com/kataras/iris/v12"

	"github.com/msbench/msbench/services/faas-gateway/gateway"
)

func serve(g *gateway.Gateway, ln net.Listener) error {
	app := iris.New()
	app.Get(gateway.HealthPath, func(ctx iris.Context) {
		ctx.WriteString(gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		app.Get(ep.Path, handler(g, ep))
	}
	return app.Run(iris.Listener(ln), iris.WithoutStartupLog, iris.WithoutServerError(iris.ErrServerClosed))
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) iris.Handler {
	return func(ctx iris.Context) {
		res := g.Handle(ctx.Request().Context(), ep, ctx.URLParam)
		ctx.Header(gateway.TimingHeader, res.Timing)
		// Iris's ContentType would append a charset even to image/png.
		ctx.Header("Content-Type", res.ContentType)
		ctx.StatusCode(res.Status)
		ctx.Write(res.Body)
	}
}

func main() {
	gateway.Main("iris", serve)
}
