// Package apitest checks the ipc study's services (../services: the API
// gateway and the five services, each in the rest, grpc and amqp style)
// against a real FerretDB, MariaDB and RabbitMQ: the composed page against
// the stores' data, bad and hostile input, a service killed, a service hung,
// the broker restarted under load, and malformed gRPC and AMQP messages.
// It lives in the root module because it starts the dependencies with
// msbench's internal/deps.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a program or a dependency outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
