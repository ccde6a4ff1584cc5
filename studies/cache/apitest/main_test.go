// Package apitest checks the cache study's services (../cache: the rbac
// service under each of its four strategies, and the gateway) over HTTP
// against a real PostgreSQL and Redis, faults included. It lives in the
// root module, outside ../cache's, because it starts the dependencies with
// msbench's internal/deps.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a service, Postgres or Redis outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
