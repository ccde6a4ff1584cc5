package fanout

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// FetchRequest is one request a generator sends on the runner's behalf
// (a hook, a service's first requests), read as JSON: from inside the
// cluster, where the runner cannot dial. Where it may go is checked as a
// load's targets are (see Spec).
type FetchRequest struct {
	Method          string         `json:"method,omitempty"` // GET when empty
	URL             string         `json:"url"`
	Header          http.Header    `json:"header,omitempty"`
	Body            []byte         `json:"body,omitempty"`
	ClusterNetworks []netip.Prefix `json:"cluster_networks,omitempty"`
	AllowHosts      []string       `json:"allow_hosts,omitempty"`
}

// FetchResponse is the answer to a FetchRequest.
type FetchResponse struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// Bounds of a fetch, as the runner's own first requests and hooks have.
const (
	fetchTimeout = 60 * time.Second
	maxFetchBody = 64 << 20
)

// Fetch sends r and returns its answer, its body cut at 64 MiB; a status
// is an answer, whatever it is, for the caller to judge. Every dial,
// redirects' too, goes to an address checked as a load's target is, and
// to the very address checked.
func Fetch(ctx context.Context, r FetchRequest) (FetchResponse, error) {
	guard := Spec{ClusterNetworks: r.ClusterNetworks, AllowHosts: r.AllowHosts}
	if _, err := guard.allowed(r.URL); err != nil {
		return FetchResponse{}, err
	}
	dialer := &net.Dialer{}
	client := &http.Client{
		Timeout: fetchTimeout,
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				ap, err := guard.dialAddr(ctx, addr)
				if err != nil {
					return nil, err
				}
				return dialer.DialContext(ctx, network, ap.String())
			},
		},
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return FetchResponse{}, fmt.Errorf("fetch %s: %w", r.URL, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return FetchResponse{}, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody))
	if err != nil {
		return FetchResponse{}, fmt.Errorf("fetch %s: read body: %w", r.URL, err)
	}
	return FetchResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// dialAddr is the address to dial for host:port: a literal address
// that allowed accepts, or a name that AllowHosts lists or whose every
// address is on this machine (then its first, as the engine dials it).
func (s Spec) dialAddr(ctx context.Context, hostport string) (netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", hostport, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: port %q is not a number from 0 to 65535", hostport, portText)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if _, err := s.allowed("http://" + hostport); err != nil {
			return netip.AddrPort{}, err
		}
		return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: no address", host)
	}
	if !slices.Contains(s.AllowHosts, host) {
		for _, ip := range ips {
			if !ip.Unmap().IsLoopback() {
				return netip.AddrPort{}, fmt.Errorf("%s resolves to %s, not on this machine: a generator loads another host only when the study names it", host, ip)
			}
		}
	}
	return netip.AddrPortFrom(ips[0].Unmap(), uint16(port)), nil
}
