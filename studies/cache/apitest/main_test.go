// Package apitest checks the cache study's services (../services: the
// rbac service under each of its four strategies, and the gateway) over
// HTTP against a real PostgreSQL and Redis, faults included. It starts
// them from ../study.yaml through msbench's own deployment
// (internal/runner/deploytest), changing only what it says (a short
// CACHE_TTL, short read timeouts), so that it checks what a run measures.
// It lives in the root module, outside ../services', for that harness.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a service, Postgres or Redis outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
