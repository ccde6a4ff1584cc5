package proc_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
	"github.com/msbench/msbench/internal/proc/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(m, proctest.Modes{
		"grandchild": grandchildMode,
		"http":       httpMode,
		"fail":       failMode,
		"supervisor": supervisorMode,
	})
}

// grandchildMode [pidfile childMode] forks a helper in childMode that stays
// in our process group, waits until it is set up (a TERM-ignoring child
// must not be signalled before it ignores TERM), writes its pid to pidfile
// and blocks.
func grandchildMode(args []string) int {
	cmd := proctest.Command(args[1])
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != proctest.ReadyMarker {
		fmt.Printf("grandchild not ready: %q %v\n", line, err)
		return 1
	}
	if err := os.WriteFile(args[0], []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(proctest.ReadyMarker)
	return proctest.Block()
}

// httpMode [port delay status] listens after delay and answers status.
func httpMode(args []string) int {
	delay, _ := time.ParseDuration(args[1])
	status, _ := strconv.Atoi(args[2])
	time.Sleep(delay)
	l, err := net.Listen("tcp", "127.0.0.1:"+args[0])
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(proctest.ReadyMarker)
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
	}))
	return 1
}

func failMode([]string) int {
	fmt.Println("boom: config file missing")
	return 3
}

// supervisorMode [pidfile] plays msbench: it starts a child through
// proc.Start, writes the child's pid and blocks until it is killed.
func supervisorMode(args []string) int {
	p, err := proc.Start(context.Background(), proc.Spec{
		Name: "child",
		Path: os.Args[0],
		Env:  []string{proctest.Env("sleep")},
	})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := os.WriteFile(args[0], []byte(strconv.Itoa(p.Pid())), 0o644); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(proctest.ReadyMarker)
	return proctest.Block()
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitState polls /proc/pid/stat until cond holds, for state changes the
// kernel applies asynchronously to a signal.
func waitState(t *testing.T, pid int, what string, cond func(procfs.Stat, error) bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		s, err := procfs.ReadStat(pid)
		if cond(s, err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: not %s (state %c, err %v)", pid, what, s.State, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	waitState(t, pid, "dead", func(s procfs.Stat, err error) bool { return err != nil || s.Dead() })
}
