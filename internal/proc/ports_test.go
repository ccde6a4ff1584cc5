package proc_test

import (
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/msbench/msbench/internal/proc"
)

func TestFreePortIsBindable(t *testing.T) {
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d not bindable: %v", port, err)
	}
	l.Close()
}

func TestPortAllocatorNeverRepeats(t *testing.T) {
	var a proc.PortAllocator
	const workers, each = 8, 50
	var (
		mu   sync.Mutex
		seen = map[int]bool{}
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for range each {
				p, err := a.Next()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				seen[p] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Errorf("got %d distinct ports, want %d", len(seen), workers*each)
	}
}
