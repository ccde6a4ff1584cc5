package deps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

// hold is the body of the helper process of TestHardDeathLeavesNothing:
// msbench with dependencies. It starts every kind in args[1:] in a private
// dir under args[0], prints each instance's ports as "port N" lines and
// waits to be killed.
func hold(args []string) int {
	base, kinds := args[0], args[1:]
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ins := make([]*Instance, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, k := range kinds {
		wg.Go(func() {
			ins[i], errs[i] = Start(ctx, Kind(k), Options{Name: k, Dir: filepath.Join(base, k), LogDir: filepath.Join(base, "logs")})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, in := range ins {
		for _, port := range instancePorts(in) {
			fmt.Println("port", port)
		}
	}
	fmt.Println(proctest.ReadyMarker)
	return proctest.Block()
}

// When msbench dies by SIGKILL, so without stopping anything, every
// server goes with it at once (the parent-death signal reaches each,
// because each is the process msbench started, and each one's own children
// follow it), and frees its ports.
func TestHardDeathLeavesNothing(t *testing.T) {
	t.Parallel()
	base := tempDir(t)
	args := []string{base}
	for _, k := range Kinds() {
		args = append(args, string(k))
	}
	holder := proctest.Start(t, proctest.Spec(t, "holder", "hold", args...))
	started := proc.FuncCheck(func(context.Context) error {
		if b, _ := os.ReadFile(holder.LogPath()); !strings.Contains(string(b), proctest.ReadyMarker) {
			return errors.New("not started yet")
		}
		return nil
	})
	if err := proc.WaitReady(context.Background(), holder, started, testTimeout); err != nil {
		t.Fatalf("%v; its log ends:\n%s", err, proc.LogTail(holder.LogPath(), 30))
	}
	// The kill skips Stop, so what a killed Postgres leaves outside the
	// private dir (its shared memory) is left to the lease, which the next
	// msbench sweeps, as here.
	defer func() {
		if s := lease.Sweep(); len(s.Left) > 0 {
			t.Errorf("the sweep after the kill left: %v", s.Left)
		}
		if items, _ := lease.Held(holder.Pid()); len(items) > 0 {
			t.Errorf("the killed holder's lease still lists %v", items)
		}
	}()

	log, _ := os.ReadFile(holder.LogPath())
	var ports []int
	for _, line := range strings.Split(string(log), "\n") {
		if p, ok := strings.CutPrefix(line, "port "); ok {
			port, _ := strconv.Atoi(p)
			ports = append(ports, port)
		}
	}
	stats, err := procfs.All()
	if err != nil {
		t.Fatal(err)
	}
	servers := procfs.Descendants(stats, holder.Pid())[1:]
	var names []string
	for _, s := range servers {
		names = append(names, s.Comm)
	}
	t.Logf("killing the holder of %d processes: %s", len(servers), strings.Join(names, " "))

	if err := holder.Kill(); err != nil {
		t.Fatal(err)
	}
	<-holder.Done()
	begin := time.Now()
	var left []string
	for {
		left = leftOf(t, servers, ports, base)
		if len(left) == 0 || time.Since(begin) > 5*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("%v after the holder was killed: %s", time.Since(begin).Round(time.Millisecond), strings.Join(left, "; "))
	}
	t.Logf("all gone %v after the kill", time.Since(begin).Round(time.Millisecond))
}

// leftOf describes what is still alive of servers (a pid counts only with
// its start time, against reuse), still accepting on ports, or still
// referring to dir.
func leftOf(t *testing.T, servers []procfs.Stat, ports []int, dir string) []string {
	var left []string
	for _, s := range servers {
		if now, err := procfs.ReadStat(s.PID); err == nil && now.StartTime == s.StartTime && !now.Dead() {
			left = append(left, fmt.Sprintf("process %d (%s) alive", s.PID, s.Comm))
		}
	}
	for _, port := range ports {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
			conn.Close()
			left = append(left, fmt.Sprintf("port %d open", port))
		}
	}
	for _, pid := range processesMentioning(t, dir) {
		left = append(left, fmt.Sprintf("process %d refers to %s", pid, dir))
	}
	return left
}
