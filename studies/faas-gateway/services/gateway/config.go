package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/rpcclient"
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
	Limits   Limits
}

// ConfigFromEnv reads the configuration from environment variables:
//
//	ADDR           listen address, loopback only (required)
//	RPC_ADDR       RPC server address (default 127.0.0.1:40123)
//	RPC_POLICY     dial or pooled (default pooled)
//	RPC_TIMEOUT    whole-call timeout as a Go duration (default 30s)
//	RPC_POOL_SIZE  persistent connections under pooled (default 4)
//	MATH_MAX_N     largest n /math accepts (default 200000000)
//
// and the Limits from READ_HEADER_TIMEOUT, READ_TIMEOUT, WRITE_TIMEOUT and
// IDLE_TIMEOUT (Go durations, defaults in DefaultLimits).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Addr:     getenv("ADDR"),
		RPC:      rpcclient.Config{Addr: getenv("RPC_ADDR"), Policy: rpcclient.PolicyPooled},
		MaxMathN: DefaultMaxMathN,
		Limits:   DefaultLimits,
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
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{"RPC_TIMEOUT", &cfg.RPC.CallTimeout},
		{"READ_HEADER_TIMEOUT", &cfg.Limits.ReadHeaderTimeout},
		{"READ_TIMEOUT", &cfg.Limits.ReadTimeout},
		{"WRITE_TIMEOUT", &cfg.Limits.WriteTimeout},
		{"IDLE_TIMEOUT", &cfg.Limits.IdleTimeout},
	} {
		if v := getenv(d.name); v != "" {
			dur, err := time.ParseDuration(v)
			if err != nil || dur <= 0 {
				return Config{}, fmt.Errorf("%s: want a positive duration such as 30s, got %q", d.name, v)
			}
			*d.dst = dur
		}
	}
	if l := cfg.Limits; l.ReadHeaderTimeout > l.ReadTimeout {
		return Config{}, fmt.Errorf("READ_HEADER_TIMEOUT %v is above READ_TIMEOUT %v, which covers the headers too", l.ReadHeaderTimeout, l.ReadTimeout)
	}
	// net/http's write deadline runs from the end of the request headers,
	// so it includes the handler: a shorter one would cut off a slow call's
	// answer, the 504 included.
	callTimeout := cmp.Or(cfg.RPC.CallTimeout, rpcclient.DefaultCallTimeout)
	if cfg.Limits.WriteTimeout <= callTimeout {
		return Config{}, fmt.Errorf("WRITE_TIMEOUT %v must exceed the RPC call timeout %v", cfg.Limits.WriteTimeout, callTimeout)
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
