// Command hello is the go-micro service that answers Hello.Say.
package main

import (
	"context"
	"log"

	"go-micro.dev/v5"

	"github.com/msbench/msbench/studies/frameworks/services/micro/api"
	"github.com/msbench/msbench/studies/frameworks/services/micro/platform"
)

// Hello is the handler; go-micro exposes its methods as endpoints.
type Hello struct{}

// Say answers the greeting.
func (*Hello) Say(_ context.Context, _ *api.HelloRequest, rsp *api.HelloResponse) error {
	rsp.Message = "Hello World!"
	return nil
}

func main() {
	svc := micro.NewService(platform.ServiceOptions(api.HelloService, "HELLO_ADDR")...)
	svc.Init()
	if err := micro.RegisterHandler(svc.Server(), new(Hello)); err != nil {
		log.Fatal(err)
	}
	if err := svc.Run(); err != nil {
		log.Fatal(err)
	}
}
