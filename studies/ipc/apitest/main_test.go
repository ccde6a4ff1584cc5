// Package apitest checks the ipc study's services (../services: the API
// gateway and the five services, each in the rest, grpc and amqp style)
// as the study deploys them, from ../study.yaml through
// internal/runner/deploytest, on a real FerretDB, MariaDB and RabbitMQ:
// the composed page against the stores' data, bad and hostile input, a
// service killed, a service hung, the broker restarted under load, and
// malformed gRPC and AMQP messages. A check states only what it changes of
// the study file (short limits and timeouts, deploy_test.go), so that a
// command or an environment value changed there changes what is tested.
// It lives in the root module because it deploys with msbench's
// internal/runner.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a program or a dependency outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
