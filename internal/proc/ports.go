package proc

import (
	"fmt"
	"net"
	"sync"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. The
// listener is closed before returning, so another process may still take the
// port before the caller binds it; PortAllocator narrows that race within
// one run.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// maxPortTries bounds how often Next asks the kernel before giving up; the
// ephemeral range is large, so repeats are rare.
const maxPortTries = 100

// PortAllocator hands out free ports and never the same port twice, so two
// services of one run cannot both be told to use a port the kernel happened
// to offer twice. The zero value is ready to use and safe for concurrent use.
type PortAllocator struct {
	mu    sync.Mutex
	given map[int]struct{}
}

// Next returns a free port not returned before by this allocator.
func (a *PortAllocator) Next() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.given == nil {
		a.given = make(map[int]struct{})
	}
	for range maxPortTries {
		p, err := FreePort()
		if err != nil {
			return 0, err
		}
		if _, dup := a.given[p]; !dup {
			a.given[p] = struct{}{}
			return p, nil
		}
	}
	return 0, fmt.Errorf("free port: no new port after %d tries", maxPortTries)
}
