package proc

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Check probes whether something is ready. A nil error means ready.
type Check interface {
	Check(ctx context.Context) error
}

// checkClient is shared by all HTTP checks. Keep-alives are off so that no
// idle connection to a service outlives the probe (and holds a port or a
// server goroutine during the measurement); redirects are not followed so
// the status of the probed URL itself is judged; no proxy, ever, for a
// local service.
var checkClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// HTTPCheck GETs URL and wants WantStatus, or any 2xx when it is zero.
type HTTPCheck struct {
	URL        string
	WantStatus int
}

func (c HTTPCheck) String() string { return "GET " + c.URL }

// Check implements Check.
func (c HTTPCheck) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", c, err)
	}
	resp, err := checkClient.Do(req)
	if err != nil {
		return err // already names the method and URL
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if c.WantStatus != 0 {
		ok = resp.StatusCode == c.WantStatus
	}
	if !ok {
		return fmt.Errorf("%s: status %d", c, resp.StatusCode)
	}
	return nil
}

// TCPCheck is ready once a TCP connection to Addr succeeds.
type TCPCheck struct {
	Addr string
}

func (c TCPCheck) String() string { return "tcp " + c.Addr }

// Check implements Check.
func (c TCPCheck) Check(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// FuncCheck adapts a function, e.g. a database ping, to Check.
type FuncCheck func(ctx context.Context) error

func (f FuncCheck) String() string { return "custom check" }

// Check implements Check.
func (f FuncCheck) Check(ctx context.Context) error { return f(ctx) }

func checkName(c Check) string {
	if s, ok := c.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", c)
}

// Compile-time proof that the provided checks satisfy Check.
var (
	_ Check = HTTPCheck{}
	_ Check = TCPCheck{}
	_ Check = FuncCheck(nil)
)
