// Package rpcclient is the gateway's net/rpc client. It offers the two
// connection policies the study compares: a new TCP connection per call, as
// the original authors' gateway did, and a small pool of persistent
// connections that heal themselves when the RPC server restarts.
package rpcclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msbench/msbench/studies/faas-gateway/services/function"
)

// Policy says how the client gets a connection for a call.
type Policy string

const (
	// PolicyDial opens a new TCP connection for every call and closes it after.
	PolicyDial Policy = "dial"
	// PolicyPooled reuses persistent connections and redials broken ones.
	PolicyPooled Policy = "pooled"
)

// ParsePolicy turns a configuration string into a Policy.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case PolicyDial, PolicyPooled:
		return p, nil
	}
	return "", fmt.Errorf("unknown rpc policy %q (want %q or %q)", s, PolicyDial, PolicyPooled)
}

// Defaults for the zero values of Config.
const (
	DefaultDialTimeout = time.Second
	DefaultCallTimeout = 30 * time.Second
	DefaultPoolSize    = 4
)

// ErrUnavailable marks calls that failed because no connection to the RPC
// server could be made: the server is down or unreachable.
var ErrUnavailable = errors.New("rpc server unavailable")

// Config configures a Client.
type Config struct {
	Addr   string
	Policy Policy
	// DialTimeout bounds connection set-up so a dead host fails fast.
	DialTimeout time.Duration
	// CallTimeout bounds a whole call, set-up included. It must leave room
	// for the slowest function (1 s sleep, large math n) under load.
	CallTimeout time.Duration
	// PoolSize is the number of persistent connections (pooled only). More
	// than one keeps a large image reply from blocking every other call
	// behind it on a single connection.
	PoolSize int
}

// Client calls the functions on one RPC server. It is safe for concurrent use.
type Client struct {
	cfg   Config
	slots []slot // nil under PolicyDial
	next  atomic.Uint64
}

// slot holds one persistent connection, nil until first used or after it broke.
type slot struct {
	mu     sync.Mutex
	client *rpc.Client
}

// New returns a Client; it connects lazily, so the RPC server need not be up.
func New(cfg Config) (*Client, error) {
	if cfg.Addr == "" {
		return nil, errors.New("rpc client: empty server address")
	}
	if _, err := ParsePolicy(string(cfg.Policy)); err != nil {
		return nil, fmt.Errorf("rpc client: %w", err)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	c := &Client{cfg: cfg}
	if cfg.Policy == PolicyPooled {
		c.slots = make([]slot, cfg.PoolSize)
	}
	return c, nil
}

// Call invokes method with args. Besides the reply it returns the RPC
// duration: from sending the call to receiving its result, on an established
// connection. Connection set-up is left out on purpose, so that under
// PolicyDial it shows up as the gap between handler and RPC time.
func (c *Client) Call(ctx context.Context, method string, args function.Args) (function.Reply, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	if c.slots == nil {
		return c.callDialed(ctx, method, args)
	}
	return c.callPooled(ctx, method, args)
}

// Close closes the persistent connections; calls after Close redial.
func (c *Client) Close() error {
	var errs []error
	for i := range c.slots {
		s := &c.slots[i]
		s.mu.Lock()
		if s.client != nil {
			errs = append(errs, s.client.Close())
			s.client = nil
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (c *Client) callDialed(ctx context.Context, method string, args function.Args) (function.Reply, time.Duration, error) {
	rc, err := c.dial(ctx)
	if err != nil {
		return function.Reply{}, 0, err
	}
	defer rc.Close()
	return invoke(ctx, rc, method, args)
}

func (c *Client) callPooled(ctx context.Context, method string, args function.Args) (function.Reply, time.Duration, error) {
	s := &c.slots[c.next.Add(1)%uint64(len(c.slots))]
	for retried := false; ; retried = true {
		rc, err := c.connection(ctx, s)
		if err != nil {
			return function.Reply{}, 0, err
		}
		reply, d, err := invoke(ctx, rc, method, args)
		if err == nil || !broken(err) {
			return reply, d, err
		}
		s.drop(rc)
		// ErrShutdown means the request was never sent: the connection had
		// died while idle, typically because the server restarted. One retry
		// on a fresh connection hides that from the caller; a call that broke
		// in flight is reported, not repeated.
		if retried || !errors.Is(err, rpc.ErrShutdown) {
			return reply, d, err
		}
	}
}

// connection returns the slot's connection, dialing it if needed. Holding the
// slot lock while dialing makes concurrent callers share one new connection.
func (c *Client) connection(ctx context.Context, s *slot) (*rpc.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		rc, err := c.dial(ctx)
		if err != nil {
			return nil, err
		}
		s.client = rc
	}
	return s.client, nil
}

// drop forgets rc if it is still the slot's connection; another caller may
// already have replaced it.
func (s *slot) drop(rc *rpc.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == rc {
		s.client = nil
		rc.Close()
	}
}

func (c *Client) dial(ctx context.Context) (*rpc.Client, error) {
	d := net.Dialer{Timeout: c.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial rpc %s: %w: %w", c.cfg.Addr, ErrUnavailable, err)
	}
	return rpc.NewClient(conn), nil
}

// invoke sends one call and waits for its result or for ctx to end. net/rpc
// has no context support, so an abandoned call finishes in the background and
// its result is dropped.
func invoke(ctx context.Context, rc *rpc.Client, method string, args function.Args) (function.Reply, time.Duration, error) {
	var reply function.Reply
	start := time.Now()
	call := rc.Go(method, args, &reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		d := time.Since(start)
		if call.Error != nil {
			return function.Reply{}, d, fmt.Errorf("call %s: %w", method, call.Error)
		}
		return reply, d, nil
	case <-ctx.Done():
		return function.Reply{}, time.Since(start), fmt.Errorf("call %s: %w", method, ctx.Err())
	}
}

// broken reports whether err means the connection can no longer be used. A
// function error travels over a healthy connection, and a timeout may only
// mean a slow function, so neither closes a connection other calls share.
func broken(err error) bool {
	var serverErr rpc.ServerError
	return !errors.As(err, &serverErr) &&
		!errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, context.Canceled)
}
