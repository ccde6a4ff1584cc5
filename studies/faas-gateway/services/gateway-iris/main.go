// Command gateway-iris is the gateway on Iris v12.
package main

import (
	"log"

	"github.com/kataras/iris/v12"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

func newServer(g *gateway.Gateway, l gateway.Limits) gateway.Server {
	app := iris.New()
	app.Get(gateway.HealthPath, func(ctx iris.Context) {
		ctx.WriteString(gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		app.Get(ep.Path, handler(g, ep))
	}
	// Iris's "std-way" custom server: the built app is the Handler of an
	// http.Server. app.Run would also install Iris's own SIGINT/SIGTERM
	// handler, whose shutdown waits up to 10 s.
	if err := app.Build(); err != nil {
		log.Fatalf("build iris app: %v", err)
	}
	return gateway.HTTPServer(app, l)
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
	gateway.Main("iris", newServer)
}
