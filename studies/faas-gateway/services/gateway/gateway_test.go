package gateway

import (
	"context"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/rpcclient"
	"github.com/msbench/msbench/studies/faas-gateway/services/rpctest"
)

var timingMetric = regexp.MustCompile(`^(handler|pre|rpc|fn);dur=\d+\.\d{6}$`)

// metrics checks the Server-Timing value's syntax and returns its names.
func metrics(t *testing.T, value string) []string {
	t.Helper()
	var names []string
	for _, m := range strings.Split(value, ", ") {
		if !timingMetric.MatchString(m) {
			t.Errorf("Server-Timing metric %q is malformed (value %q)", m, value)
		}
		names = append(names, strings.SplitN(m, ";", 2)[0])
	}
	return names
}

func endpoint(t *testing.T, path string) Endpoint {
	t.Helper()
	for _, ep := range Endpoints {
		if ep.Path == path {
			return ep
		}
	}
	t.Fatalf("no endpoint %s", path)
	return Endpoint{}
}

func newGateway(t *testing.T, rpcAddr string) *Gateway {
	t.Helper()
	g, err := New(Config{
		Addr:     "127.0.0.1:0",
		RPC:      rpcclient.Config{Addr: rpcAddr, Policy: rpcclient.PolicyPooled},
		MaxMathN: 1_000_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func query(params map[string]string) func(string) string {
	return func(key string) string { return params[key] }
}

func TestHandle(t *testing.T) {
	srv, err := rpctest.Start("127.0.0.1:0", function.NewService("", time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	g := newGateway(t, srv.Addr)

	tests := []struct {
		path   string
		n      string // "" leaves n out of the query
		status int
		body   string // substring of the body
		// piWithin, when set, is how far the body's estimate of pi may lie
		// from pi: about six standard errors of a Monte Carlo estimate from n
		// samples (4·sqrt(p(1−p)/n), p = pi/4), so a correct estimate fails
		// about once in 10⁸ runs rather than the 1 in 200 a fixed "3." did.
		piWithin float64
		nMetrics int
	}{
		{"/empty", "", http.StatusOK, "", 0, 4},
		{"/sleep", "", http.StatusOK, "", 0, 4},
		{"/math", "1000", http.StatusOK, "", 0.32, 4},
		{"/math", "1000000", http.StatusOK, "", 0.01, 4},
		{"/math", "", http.StatusBadRequest, "missing query parameter n", 0, 1},
		{"/math", "-1", http.StatusBadRequest, "unsigned 64-bit integer", 0, 1},
		{"/math", "abc", http.StatusBadRequest, "unsigned 64-bit integer", 0, 1},
		{"/math", "1.5", http.StatusBadRequest, "unsigned 64-bit integer", 0, 1},
		{"/math", "18446744073709551616", http.StatusBadRequest, "unsigned 64-bit integer", 0, 1},
		{"/math", "0", http.StatusBadRequest, "at least 1", 0, 1},
		{"/math", "1000001", http.StatusBadRequest, "limit of 1000000", 0, 1},
		{"/math", "18446744073709551615", http.StatusBadRequest, "MATH_MAX_N", 0, 1},
	}
	for _, tt := range tests {
		params := map[string]string{}
		if tt.n != "" {
			params["n"] = tt.n
		}
		res := g.Handle(context.Background(), endpoint(t, tt.path), query(params))
		if res.Status != tt.status || !strings.Contains(string(res.Body), tt.body) {
			t.Errorf("%s n=%q: %d %q, want %d containing %q", tt.path, tt.n, res.Status, res.Body, tt.status, tt.body)
		}
		if tt.piWithin > 0 {
			if v, err := strconv.ParseFloat(strings.TrimSpace(string(res.Body)), 64); err != nil || math.Abs(v-math.Pi) > tt.piWithin {
				t.Errorf("%s n=%q: body %q, want pi within %g", tt.path, tt.n, res.Body, tt.piWithin)
			}
		}
		if names := metrics(t, res.Timing); len(names) != tt.nMetrics || names[0] != MetricHandler {
			t.Errorf("%s n=%q: Server-Timing %q, want %d metrics starting with handler", tt.path, tt.n, res.Timing, tt.nMetrics)
		}
		if !strings.HasPrefix(res.ContentType, "text/plain") {
			t.Errorf("%s n=%q: Content-Type %q, want text/plain", tt.path, tt.n, res.ContentType)
		}
	}
}

func TestHandleRPCDown(t *testing.T) {
	srv, err := rpctest.Start("127.0.0.1:0", function.NewService("", 0))
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, srv.Addr)
	srv.Stop()

	start := time.Now()
	res := g.Handle(context.Background(), endpoint(t, "/empty"), query(nil))
	if res.Status != http.StatusServiceUnavailable || !strings.Contains(string(res.Body), "unavailable") {
		t.Errorf("RPC down: %d %q, want 503 saying unavailable", res.Status, res.Body)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("RPC down answer took %v", elapsed)
	}
	if names := metrics(t, res.Timing); len(names) != 1 {
		t.Errorf("RPC down Server-Timing %q, want handler only", res.Timing)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if res := g.Handle(context.Background(), endpoint(t, "/empty"), query(nil)); res.Status != http.StatusOK {
		t.Errorf("after restart: %d %q, want 200", res.Status, res.Body)
	}
}

func TestRPCStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{rpcclient.ErrUnavailable, http.StatusServiceUnavailable},
		{context.DeadlineExceeded, http.StatusGatewayTimeout},
		{context.Canceled, http.StatusBadGateway},
		{function.ErrNoSamples, http.StatusBadGateway},
	}
	for _, tt := range tests {
		if got := rpcStatus(tt.err); got != tt.want {
			t.Errorf("rpcStatus(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestTimingHeader(t *testing.T) {
	tests := []struct {
		t    timing
		want string
	}{
		{timing{handler: 1500 * time.Microsecond}, "handler;dur=1.500000"},
		{
			timing{handler: 2 * time.Millisecond, pre: 500 * time.Microsecond, rpc: time.Millisecond, rpcSet: true, fn: 42, fnSet: true},
			"handler;dur=2.000000, pre;dur=0.500000, rpc;dur=1.000000, fn;dur=0.000042",
		},
	}
	for _, tt := range tests {
		if got := tt.t.header(); got != tt.want {
			t.Errorf("header() = %q, want %q", got, tt.want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{
			name: "defaults",
			env:  map[string]string{"ADDR": "127.0.0.1:5555"},
			want: Config{
				Addr:     "127.0.0.1:5555",
				RPC:      rpcclient.Config{Addr: function.DefaultAddr, Policy: rpcclient.PolicyPooled},
				MaxMathN: DefaultMaxMathN,
				Limits:   DefaultLimits,
			},
		},
		{
			name: "everything set",
			env: map[string]string{
				"ADDR": "127.0.0.1:5556", "RPC_ADDR": "127.0.0.1:9000", "RPC_POLICY": "dial",
				"RPC_TIMEOUT": "2s", "RPC_POOL_SIZE": "8", "MATH_MAX_N": "1000",
				"READ_HEADER_TIMEOUT": "1s", "READ_TIMEOUT": "1500ms", "WRITE_TIMEOUT": "3s", "IDLE_TIMEOUT": "4s",
			},
			want: Config{
				Addr: "127.0.0.1:5556",
				RPC: rpcclient.Config{
					Addr: "127.0.0.1:9000", Policy: rpcclient.PolicyDial,
					CallTimeout: 2 * time.Second, PoolSize: 8,
				},
				MaxMathN: 1000,
				Limits:   Limits{ReadHeaderTimeout: time.Second, ReadTimeout: 1500 * time.Millisecond, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second},
			},
		},
		{name: "no addr", env: map[string]string{}, wantErr: "ADDR"},
		{name: "bad policy", env: map[string]string{"ADDR": "x", "RPC_POLICY": "often"}, wantErr: "RPC_POLICY"},
		{name: "bad timeout", env: map[string]string{"ADDR": "x", "RPC_TIMEOUT": "5"}, wantErr: "RPC_TIMEOUT"},
		{name: "negative timeout", env: map[string]string{"ADDR": "x", "RPC_TIMEOUT": "-1s"}, wantErr: "RPC_TIMEOUT"},
		{name: "bad pool", env: map[string]string{"ADDR": "x", "RPC_POOL_SIZE": "0"}, wantErr: "RPC_POOL_SIZE"},
		{name: "bad max n", env: map[string]string{"ADDR": "x", "MATH_MAX_N": "-3"}, wantErr: "MATH_MAX_N"},
		{name: "bad header timeout", env: map[string]string{"ADDR": "x", "READ_HEADER_TIMEOUT": "0s"}, wantErr: "READ_HEADER_TIMEOUT"},
		{name: "bad idle timeout", env: map[string]string{"ADDR": "x", "IDLE_TIMEOUT": "soon"}, wantErr: "IDLE_TIMEOUT"},
		{name: "header after read", env: map[string]string{"ADDR": "x", "READ_HEADER_TIMEOUT": "20s"}, wantErr: "READ_HEADER_TIMEOUT"},
		{name: "write within rpc timeout", env: map[string]string{"ADDR": "x", "RPC_TIMEOUT": "60s"}, wantErr: "WRITE_TIMEOUT"},
		{name: "write within default rpc timeout", env: map[string]string{"ADDR": "x", "WRITE_TIMEOUT": "30s"}, wantErr: "WRITE_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(query(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ConfigFromEnv = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
