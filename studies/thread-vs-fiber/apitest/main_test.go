// Package apitest checks the thread-vs-fiber image services (../services:
// gin, and spring on platform or on virtual threads) over HTTP against a
// real PostgreSQL: the same requests, the same answers, whichever
// implementation serves them, hostile clients and a clean stop included.
//
// It deploys the study's own variants from ../study.yaml through msbench's
// deployment code (internal/runner/deploytest), as a run does, changing
// only what overrides says (small limits and timeouts, a JVM that starts
// fast), so that it checks what a run measures: a command or an
// environment value changed in the study file changes what is tested.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a service, Postgres or a build tool outlives
// the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
