// Package apitest checks the frameworks study's three systems under test
// (../services/spring, ../services/nest, ../services/micro) over HTTP, each
// through its gateway: the same requests, the same answers, whichever
// framework serves them.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a program or a build tool outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
