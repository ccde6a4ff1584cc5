// Package apitest checks the frameworks study's three systems under test
// (../services/spring, ../services/nest, ../services/micro) over HTTP, each
// through its gateway: the same requests, the same answers, whichever
// framework serves them. It deploys them from ../study.yaml through
// msbench's own deployment (internal/runner/deploytest), as a run does,
// changing only what it says (short read timeouts, a dataset file of the
// test's own, a JVM tuned to start rather than to run fast), so that it
// checks what a run measures.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a program or a build tool outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
