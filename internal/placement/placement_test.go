package placement

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestParseAndString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"0", "0"},
		{"0-1", "0-1"},
		{"0,2", "0,2"},
		{" 3, 0-1 ,2", "0-3"},
		{"0-3,6,8-9", "0-3,6,8-9"},
		{"1,1,1", "1"},
	}
	for _, tt := range tests {
		c, err := Parse(tt.in)
		if err != nil || c.String() != tt.want {
			t.Errorf("Parse(%q) = %v (%q), %v; want %q", tt.in, c, c.String(), err, tt.want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1-", "2-1", "0,,1", "+1", "0.5", "99999"} {
		if c, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", bad, c)
		}
	}
}

func TestTextRoundTrip(t *testing.T) {
	var c CPUs
	if err := c.UnmarshalText([]byte("0-2,5")); err != nil {
		t.Fatal(err)
	}
	b, _ := c.MarshalText()
	if string(b) != "0-2,5" || !c.Contains(1) || c.Contains(3) {
		t.Fatalf("%v → %s", c, b)
	}
	if got := c.Minus(CPUs{1, 5}); got.String() != "0,2" {
		t.Fatalf("minus %v", got)
	}
}

func TestCheckNamesMissingCores(t *testing.T) {
	err := Check(CPUs{0, 1000})
	if err == nil || !strings.Contains(err.Error(), "core(s) 1000 do not exist on this machine") {
		t.Fatalf("err = %v", err)
	}
	if err := Check(Available()); err != nil {
		t.Fatal(err)
	}
}

// Self places every thread of the process, the kernel says so in
// /proc/PID/status, and restore puts it back.
func TestSelfPlacesEveryThreadAndRestores(t *testing.T) {
	avail := Available()
	if len(avail) < 2 {
		t.Skip("needs 2 cores")
	}
	target := avail[len(avail)-1:]
	restore, err := Self(target)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Allowed(os.Getpid())
	if err != nil || !got.Equal(target) {
		t.Errorf("Cpus_allowed_list %v (%v), want %v", got, err, target)
	}
	tids, _ := threads(os.Getpid())
	for _, tid := range tids {
		if c, err := Of(tid); err == nil && !c.Equal(target) {
			t.Errorf("thread %d on %v, want %v", tid, c, target)
		}
	}
	// One P more than the cores: the load loop keeps its own in a raw
	// system call, and the link proxies need another.
	if runtime.GOMAXPROCS(0) != len(target)+1 {
		t.Errorf("GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), len(target)+1)
	}
	// A thread made now inherits it.
	done := make(chan CPUs)
	go func() {
		runtime.LockOSThread()
		done <- Current()
	}()
	if c := <-done; !c.Equal(target) {
		t.Errorf("a new thread runs on %v", c)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got, _ := Allowed(os.Getpid()); !got.Equal(avail) {
		t.Errorf("after restore on %v, want %v", got, avail)
	}
}
