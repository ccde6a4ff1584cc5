// Package apitest checks the faas-gateway study's services (../services:
// the RPC server and the five gateways, each with both RPC connection
// policies) as real processes over loopback TCP: the endpoints, bad input,
// hostile clients, an RPC server outage and a clean stop. It starts them
// from ../study.yaml through msbench's own deployment
// (internal/runner/deploytest), one deployment per variant, changing only
// what it says (short read timeouts, a low MATH_MAX_N, a shorter
// RPC_TIMEOUT), so that it checks what a run measures. It lives in the
// root module, outside ../services', for that harness.
package apitest

import (
	"testing"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestMain fails the run if a gateway or an RPC server outlives the tests.
func TestMain(m *testing.M) { proctest.Main(m, nil) }
