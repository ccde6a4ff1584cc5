// Command gateway-fiber is the gateway on Fiber v2, which runs on fasthttp
// rather than net/http (the engine nuclio uses).
package main

import (
	"github.com/gofiber/fiber/v2"

	"github.com/msbench/msbench/studies/faas-gateway/services/gateway"
)

func newServer(g *gateway.Gateway, l gateway.Limits) gateway.Server {
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		// fasthttp has no separate header timeout: ReadTimeout covers the
		// headers and the body together.
		ReadTimeout:  l.ReadTimeout,
		WriteTimeout: l.WriteTimeout,
		IdleTimeout:  l.IdleTimeout,
		// fasthttp's read buffer holds the whole header block, so its size
		// is the header limit.
		ReadBufferSize: gateway.MaxHeaderBytes,
		BodyLimit:      gateway.MaxBodyBytes,
	})
	app.Get(gateway.HealthPath, func(c *fiber.Ctx) error {
		return c.SendString(gateway.HealthBody)
	})
	for _, ep := range gateway.Endpoints {
		app.Get(ep.Path, handler(g, ep))
	}
	return gateway.Server{Serve: app.Listener, Shutdown: app.ShutdownWithContext}
}

func handler(g *gateway.Gateway, ep gateway.Endpoint) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// fasthttp has no per-request cancellation; UserContext is Fiber's
		// context.Context for calls made by a handler.
		res := g.Handle(c.UserContext(), ep, func(key string) string { return c.Query(key) })
		c.Set(gateway.TimingHeader, res.Timing)
		c.Set(fiber.HeaderContentType, res.ContentType)
		return c.Status(res.Status).Send(res.Body)
	}
}

func main() {
	gateway.Main("fiber", newServer)
}
