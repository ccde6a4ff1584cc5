package rpcclient

import (
	"context"
	"errors"
	"net/rpc"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
	"github.com/msbench/msbench/studies/faas-gateway/services/rpctest"
)

var policies = []Policy{PolicyDial, PolicyPooled}

// startServer runs an RPC server whose sleep function waits for sleep.
func startServer(t *testing.T, sleep time.Duration) *rpctest.Server {
	t.Helper()
	srv, err := rpctest.Start("127.0.0.1:0", function.NewService("", sleep))
	if err != nil {
		t.Fatalf("start rpc server: %v", err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in      string
		want    Policy
		wantErr bool
	}{
		{"dial", PolicyDial, false},
		{"pooled", PolicyPooled, false},
		{"", "", true},
		{"Pooled", "", true},
		{"keepalive", "", true},
	}
	for _, tt := range tests {
		got, err := ParsePolicy(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Policy: PolicyPooled},
		{Addr: "127.0.0.1:1", Policy: "sometimes"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
}

func TestCall(t *testing.T) {
	srv := startServer(t, 0)
	for _, policy := range policies {
		t.Run(string(policy), func(t *testing.T) {
			c := newClient(t, Config{Addr: srv.Addr, Policy: policy})
			reply, d, err := c.Call(context.Background(), function.MethodMath, function.Args{N: 1000})
			if err != nil {
				t.Fatalf("Call math: %v", err)
			}
			if len(reply.Body) != len("3.14159") || reply.FnNanos <= 0 || d <= 0 {
				t.Errorf("Call math = body %q, fn %d ns, rpc %v", reply.Body, reply.FnNanos, d)
			}
			if time.Duration(reply.FnNanos) > d {
				t.Errorf("function time %v exceeds rpc time %v", time.Duration(reply.FnNanos), d)
			}

			// A function error arrives as rpc.ServerError and leaves the
			// connection usable.
			_, _, err = c.Call(context.Background(), function.MethodMath, function.Args{N: 0})
			var serverErr rpc.ServerError
			if !errors.As(err, &serverErr) {
				t.Errorf("Call math n=0 error = %v, want rpc.ServerError", err)
			}
			if _, _, err := c.Call(context.Background(), function.MethodEmpty, function.Args{}); err != nil {
				t.Errorf("Call after a function error: %v", err)
			}
		})
	}
}

func TestPooledConcurrentCalls(t *testing.T) {
	srv := startServer(t, 0)
	c := newClient(t, Config{Addr: srv.Addr, Policy: PolicyPooled, PoolSize: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			if _, _, err := c.Call(context.Background(), function.MethodMath, function.Args{N: 10_000}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestServerGoesAwayAndComesBack cuts the server off as a crash would: calls
// must fail fast while it is gone and succeed again once it is back, without
// the client being recreated.
func TestServerGoesAwayAndComesBack(t *testing.T) {
	for _, policy := range policies {
		t.Run(string(policy), func(t *testing.T) {
			srv := startServer(t, 0)
			c := newClient(t, Config{Addr: srv.Addr, Policy: policy, PoolSize: 2})
			empty := func() error {
				_, _, err := c.Call(context.Background(), function.MethodEmpty, function.Args{})
				return err
			}
			for range 4 { // touch every pooled connection
				if err := empty(); err != nil {
					t.Fatalf("Call before outage: %v", err)
				}
			}

			srv.Stop()
			for range 4 {
				start := time.Now()
				err := empty()
				if err == nil {
					t.Fatal("Call while the server is down succeeded")
				}
				if elapsed := time.Since(start); elapsed > time.Second {
					t.Errorf("Call while down took %v, want a fast failure", elapsed)
				}
			}
			if err := empty(); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Call while down = %v, want ErrUnavailable", err)
			}

			if err := srv.Restart(); err != nil {
				t.Fatalf("restart server: %v", err)
			}
			// The very first call after the restart must work: stale pooled
			// connections are replaced transparently.
			for i := range 4 {
				if err := empty(); err != nil {
					t.Fatalf("Call %d after restart: %v", i, err)
				}
			}
		})
	}
}

// TestStaleConnectionIsReplaced restarts the server between two calls with no
// call in the outage, the case a pooled client meets after a quick restart.
func TestStaleConnectionIsReplaced(t *testing.T) {
	srv := startServer(t, 0)
	c := newClient(t, Config{Addr: srv.Addr, Policy: PolicyPooled, PoolSize: 1})
	if _, _, err := c.Call(context.Background(), function.MethodEmpty, function.Args{}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Give the client's reader time to notice the cut connection.
	time.Sleep(20 * time.Millisecond)
	if _, _, err := c.Call(context.Background(), function.MethodEmpty, function.Args{}); err != nil {
		t.Fatalf("Call on a stale connection after restart: %v", err)
	}
}

func TestCallTimeout(t *testing.T) {
	srv := startServer(t, 2*time.Second)
	for _, policy := range policies {
		t.Run(string(policy), func(t *testing.T) {
			c := newClient(t, Config{Addr: srv.Addr, Policy: policy, CallTimeout: 100 * time.Millisecond})
			start := time.Now()
			_, _, err := c.Call(context.Background(), function.MethodSleep, function.Args{})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Call sleep = %v, want DeadlineExceeded", err)
			}
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("timed-out call took %v", elapsed)
			}
			// A timeout must not poison a shared connection.
			if _, _, err := c.Call(context.Background(), function.MethodEmpty, function.Args{}); err != nil {
				t.Errorf("Call after a timeout: %v", err)
			}
		})
	}
}

func TestCallerContextCancels(t *testing.T) {
	srv := startServer(t, 2*time.Second)
	c := newClient(t, Config{Addr: srv.Addr, Policy: PolicyPooled})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, _, err := c.Call(ctx, function.MethodSleep, function.Args{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a cancelled context = %v, want Canceled", err)
	}
}
