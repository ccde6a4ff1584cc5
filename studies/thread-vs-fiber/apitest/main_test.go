// Package apitest checks the thread-vs-fiber image services (../gin and
// ../spring) over HTTP against a real PostgreSQL: the same requests, the same
// answers, whichever implementation serves them.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a service, Postgres or a build tool outlives
// the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
