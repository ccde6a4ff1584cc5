package proc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. The
// listener is closed before returning, so another process may still take the
// port before the caller binds it; PortAllocator narrows that race within
// one run, and drawing below the kernel's ephemeral range (listenRange)
// keeps the machine's outgoing connections out of it.
func FreePort() (int, error) {
	lo, hi, ok := listenRange(ephemeralRangeFile)
	if !ok {
		return kernelPort()
	}
	for range maxPortTries {
		p := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		l.Close()
		return p, nil
	}
	return kernelPort()
}

// kernelPort is a port the kernel picks, from its ephemeral range.
func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralRangeFile holds the kernel's ephemeral range: the local ports
// it gives every outgoing connection (and every listener on port 0).
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// lowestListenPort is the bottom of the range FreePort draws from: above
// the ports well-known servers are configured on, so a free port drawn
// here is not one a system service binds later.
const lowestListenPort = 16384

// minListenPorts is the fewest ports a range below the ephemeral one must
// hold to be drawn from at random; with fewer, two runs at once would
// collide too often, and the kernel's range is used instead.
const minListenPorts = 4096

// listenRange reads the kernel's ephemeral range from file and returns the
// range below it, [lo, hi), to draw listening ports from. A port the
// allocator found free and a server binds a moment later can be taken in
// between by any outgoing connection on the machine when it lies in the
// ephemeral range (RabbitMQ lost its AMQP port so, in a CI run with the
// test packages in parallel); below it, only another listener can take
// it. ok is false when the file cannot be read or leaves too little room.
func listenRange(file string) (lo, hi int, ok bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, 0, false
	}
	first, err := strconv.Atoi(fields[0])
	if err != nil || first-lowestListenPort < minListenPorts {
		return 0, 0, false
	}
	return lowestListenPort, first, true
}

// maxPortTries bounds how often FreePort draws a taken port and Next a
// port it gave before; the ranges are large, so repeats are rare.
const maxPortTries = 100

// PortAllocator hands out free ports and never the same port twice, so two
// services of one run cannot both be told to use a port FreePort happened
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
