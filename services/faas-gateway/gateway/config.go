package gateway

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/msbench/msbench/services/faas-gateway/function"
	"github.com/msbench/msbench/services/faas-gateway/rpcclient"
)

// DefaultMaxMathN caps /math so one request stays near a second of CPU (about
// 1.5 s on the reference machine); larger n would let a single request
// dominate a benchmark run.
const DefaultMaxMathN = 200_000_000

// Config is a gateway's configuration.
type Config struct {
	Addr     string
	RPC      rpcclient.Config
	MaxMathN uint64
}

// ConfigFromEnv reads the configuration from environment variables:
//
//	ADDR           listen address, loopback only (required)
//	RPC_ADDR       RPC server address (default 127.0.0.1:40123)
//	RPC_POLICY     dial or pooled (default pooled)
//	RPC_TIMEOUT    whole-call timeout as a Go duration (default 30s)
//	RPC_POOL_SIZE  persistent connections under pooled (default 4)
//	MATH_MAX_N     largest n /math accepts (default 200000000)
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Addr:     getenv("ADDR"),
		RPC:      rpcclient.Config{Addr: getenv("RPC_ADDR"), Policy: rpcclient.PolicyPooled},
		MaxMathN: DefaultMaxMathN,
	}
	if cfg.Addr == "" {
		return Config{}, errors.New("ADDR is not set (e.g. ADDR=127.0.0.1:5555)")
	}
	if cfg.RPC.Addr == "" {
		cfg.RPC.Addr = function.DefaultAddr
	}
	if v := getenv("RPC_POLICY"); v != "" {
		p, err := rpcclient.ParsePolicy(v)
		if err != nil {
			return Config{}, fmt.Errorf("RPC_POLICY: %w", err)
		}
		cfg.RPC.Policy = p
	}
	if v := getenv("RPC_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("RPC_TIMEOUT: want a positive duration such as 30s, got %q", v)
		}
		cfg.RPC.CallTimeout = d
	}
	if v := getenv("RPC_POOL_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("RPC_POOL_SIZE: want a positive integer, got %q", v)
		}
		cfg.RPC.PoolSize = n
	}
	if v := getenv("MATH_MAX_N"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return Config{}, fmt.Errorf("MATH_MAX_N: want a positive integer, got %q", v)
		}
		cfg.MaxMathN = n
	}
	return cfg, nil
}
