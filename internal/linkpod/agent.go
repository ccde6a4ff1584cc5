// Package linkpod runs an emulated link (package links) as a Kubernetes
// pod on the path between two services: the agent that `msbench link`
// runs in the container, and Deploy, which puts one in a run's namespace
// behind a ClusterIP Service whose address the link's dialer is given
// instead of the target's.
//
// A Kubernetes backend runs one so:
//
//	gen, err := studyimage.Generator(ctx, store, root) // imported into the cluster
//	l, err := linkpod.Deploy(ctx, ns, "gateway>rpc", links.Spec{Latency: 10 * time.Millisecond}, rpcClusterIP+":50051", gen.Ref)
//	// the gateway is told l.Addr() for the rpc service
//	err = l.SetFault(ctx, links.Reset, 0) // at the step's link event; links.None clears it
//	err = l.Stop(ctx)
package linkpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/msbench/msbench/internal/links"
)

// Options are what one agent runs.
type Options struct {
	Name string // the link's name, for messages
	// Listen is the IP:PORT clients dial (in a pod, the pod's IP); To
	// the IP:PORT the link forwards to; Control the IP:PORT of the
	// control endpoint (POST /fault, GET /stats).
	Listen, To, Control string
	Spec                links.Spec
}

// Check refuses an address the agent must not use: it binds only the
// address it is told (no wildcard), and forwards only to a loopback or a
// private address (RFC 1918, RFC 4193), where pods and Services live, so
// that a mistyped --to never sends a study's load off the cluster's
// network. Names are refused too: the local cluster has no DNS, and the
// backend tells every pod IPs.
func (o Options) Check() error {
	for _, a := range []struct{ flag, addr string }{{"--listen", o.Listen}, {"--control", o.Control}} {
		ap, err := netip.ParseAddrPort(a.addr)
		if err != nil {
			return fmt.Errorf("%s %q: want IP:PORT", a.flag, a.addr)
		}
		if ap.Addr().IsUnspecified() || ap.Port() == 0 {
			return fmt.Errorf("%s %s: want an address and a port of their own, not a wildcard", a.flag, a.addr)
		}
	}
	if err := checkTo(o.To); err != nil {
		return fmt.Errorf("--to %w", err)
	}
	if o.Listen == o.Control {
		return fmt.Errorf("--listen and --control are both %s", o.Listen)
	}
	return o.Spec.Validate()
}

// checkTo refuses an upstream a link must not forward to (see Check).
func checkTo(to string) error {
	ap, err := netip.ParseAddrPort(to)
	if err != nil {
		return fmt.Errorf("%q: want IP:PORT", to)
	}
	if ip := ap.Addr().Unmap(); !ip.IsLoopback() && !ip.IsPrivate() || ap.Port() == 0 {
		return fmt.Errorf("%s: a link forwards only to a loopback or private (cluster) address and a port", to)
	}
	return nil
}

// Ready is the line the agent prints on its standard output once clients
// can connect.
type Ready struct {
	Event   string `json:"event"` // "ready"
	Name    string `json:"name"`
	Listen  string `json:"listen"`
	To      string `json:"to"`
	Control string `json:"control"`
	Link    string `json:"link"` // the Spec, as links prints it
}

// FaultRequest is the body of POST /fault. Delay is a Go duration, for
// slow_close only ("" for links.DefaultSlowClose).
type FaultRequest struct {
	Fault links.Fault `json:"fault"`
	Delay string      `json:"delay,omitempty"`
}

// Stats is what GET /stats answers.
type Stats struct {
	Accepted int64       `json:"accepted"` // connections accepted since the start
	Open     int         `json:"open"`     // connections being carried
	Fault    links.Fault `json:"fault"`
}

// stopWait bounds how long the agent waits for its connections to end.
const stopWait = 10 * time.Second

// Run runs the link until ctx ends, then stops it and returns nil. The
// ready line goes to out once both addresses are bound.
//
// links.Proxy listens on loopback only, a rule of the local lab; the
// agent therefore runs it on the pod's 127.0.0.1 and relays the pod
// address's connections to it, byte for byte, with their half-closes and
// resets, so that the link's faults reach the clients as they are.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if err := o.Check(); err != nil {
		return err
	}
	proxy, err := links.Start(o.Name, "127.0.0.1:0", o.To, o.Spec)
	if err != nil {
		return err
	}
	r := &relay{to: proxy.Addr(), conns: map[*net.TCPConn]struct{}{}}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return errors.Join(fmt.Errorf("link %s: %w", o.Name, err), proxy.Stop())
	}
	ctl, err := net.Listen("tcp", o.Control)
	if err != nil {
		return errors.Join(fmt.Errorf("link %s: control: %w", o.Name, err), ln.Close(), proxy.Stop())
	}
	srv := &http.Server{Handler: control(proxy), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctl) }()
	r.wg.Add(1)
	go r.accept(ln.(*net.TCPListener))
	ready := Ready{Event: "ready", Name: o.Name, Listen: ln.Addr().String(), To: o.To, Control: ctl.Addr().String(), Link: o.Spec.String()}
	var errs []error
	if err := json.NewEncoder(out).Encode(ready); err != nil {
		errs = append(errs, fmt.Errorf("link %s: ready line: %w", o.Name, err))
	} else {
		select {
		case <-ctx.Done():
		case err := <-served:
			errs = append(errs, fmt.Errorf("link %s: control: %w", o.Name, err))
		}
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if err := srv.Shutdown(stopCtx); err != nil {
		errs = append(errs, fmt.Errorf("link %s: control: %w", o.Name, err))
	}
	ln.Close()
	// The proxy's Stop closes its side of every relayed connection, which
	// ends the relay's copies.
	errs = append(errs, proxy.Stop(), r.stop())
	return errors.Join(errs...)
}

// control is the agent's HTTP API.
func control(p *links.Proxy) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /fault", func(w http.ResponseWriter, r *http.Request) {
		var req FaultRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			refuse(w, "want {\"fault\": NAME, \"delay\": DURATION}: "+err.Error())
			return
		}
		var delay time.Duration
		if req.Delay != "" {
			d, err := links.ParseDuration(req.Delay)
			if err != nil {
				refuse(w, "delay: "+err.Error())
				return
			}
			delay = d
		}
		if err := p.SetFault(req.Fault, delay); err != nil {
			refuse(w, err.Error())
			return
		}
		writeStats(w, p)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeStats(w, p) })
	return mux
}

// Refusal is the control endpoint's answer to a request it refuses, with
// status 400: JSON, so that the API server's proxy hands it on whole.
type Refusal struct {
	Error string `json:"error"`
}

func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(Refusal{Error: msg})
}

func writeStats(w http.ResponseWriter, p *links.Proxy) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Stats{Accepted: p.Accepted(), Open: p.Open(), Fault: p.Fault()})
}

// relay carries each connection of the pod's address to the proxy on
// loopback and back.
type relay struct {
	to    string
	wg    sync.WaitGroup // the accept loop and every connection's copies
	mu    sync.Mutex
	conns map[*net.TCPConn]struct{}
	done  bool
}

func (r *relay) accept(ln *net.TCPListener) {
	defer r.wg.Done()
	for {
		c, err := ln.AcceptTCP()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(5 * time.Millisecond) // out of descriptors, say: try again
			continue
		}
		r.wg.Add(1)
		go r.carry(c)
	}
}

// track adds c to the connections Stop closes, or reports false once
// stopping.
func (r *relay) track(cs ...*net.TCPConn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	for _, c := range cs {
		r.conns[c] = struct{}{}
	}
	return true
}

func (r *relay) untrack(cs ...*net.TCPConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		delete(r.conns, c)
	}
}

func (r *relay) carry(client *net.TCPConn) {
	defer r.wg.Done()
	conn, err := net.Dial("tcp", r.to)
	if err != nil {
		rst(client)
		return
	}
	proxy := conn.(*net.TCPConn)
	if !r.track(client, proxy) {
		rst(client)
		rst(proxy)
		return
	}
	defer r.untrack(client, proxy)
	var once sync.Once
	// A failed read or write in either direction is a reset (the link's
	// reset fault, or a peer's): both ends get one, as through the link.
	reset := func() { once.Do(func() { rst(client); rst(proxy) }) }
	var both sync.WaitGroup
	both.Add(2)
	pipe := func(dst, src *net.TCPConn) {
		defer both.Done()
		if _, err := io.Copy(dst, src); err != nil {
			reset()
			return
		}
		dst.CloseWrite()
	}
	go pipe(proxy, client)
	go pipe(client, proxy)
	both.Wait()
	client.Close()
	proxy.Close()
}

// stop closes every relayed connection and waits, within stopWait, for
// their copies to end.
func (r *relay) stop() error {
	r.mu.Lock()
	r.done = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(stopWait):
		return fmt.Errorf("relay: connections still open %s after stop", stopWait)
	}
}

// rst closes c with an RST (SO_LINGER 0).
func rst(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}
