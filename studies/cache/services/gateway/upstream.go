package main

import (
	"errors"
	"fmt"
	"net"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync/atomic"
)

// upstream is one instance behind the gateway.
type upstream struct {
	addr  string
	proxy *httputil.ReverseProxy
	// requests counts what the gateway sent it; failures the part of those
	// answered 502 because it could not be reached or did not answer.
	requests atomic.Int64
	failures atomic.Int64
}

// parseUpstreams reads UPSTREAMS: host:port entries separated by commas.
func parseUpstreams(list string) ([]*upstream, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("UPSTREAMS is not set (want 127.0.0.1:PORT,127.0.0.1:PORT,...)")
	}
	var ups []*upstream
	for _, addr := range strings.Split(list, ",") {
		addr = strings.TrimSpace(addr)
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("UPSTREAMS entry %q: %w", addr, err)
		}
		if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("UPSTREAMS entry %q: want host:port", addr)
		}
		ups = append(ups, &upstream{addr: addr})
	}
	return ups, nil
}
