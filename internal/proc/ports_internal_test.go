package proc

import (
	"os"
	"path/filepath"
	"testing"
)

func TestListenRange(t *testing.T) {
	for _, c := range []struct {
		name, file string
		lo, hi     int
		ok         bool
	}{
		{"Linux's default", "32768\t60999\n", lowestListenPort, 32768, true},
		{"a wider ephemeral range", "20480 65535", lowestListenPort, 20480, true},
		{"too little room below", "16384 65535", 0, 0, false},
		{"the whole range ephemeral", "1024 65535", 0, 0, false},
		{"just room enough", "20480 20481", lowestListenPort, 20480, true},
		{"not numbers", "low high", 0, 0, false},
		{"one number", "32768", 0, 0, false},
		{"empty", "", 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ip_local_port_range")
			if err := os.WriteFile(file, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			lo, hi, ok := listenRange(file)
			if lo != c.lo || hi != c.hi || ok != c.ok {
				t.Errorf("listenRange(%q) = %d, %d, %v, want %d, %d, %v", c.file, lo, hi, ok, c.lo, c.hi, c.ok)
			}
		})
	}
	if _, _, ok := listenRange(filepath.Join(t.TempDir(), "missing")); ok {
		t.Error("a range from a missing file")
	}
}

// TestFreePortIsBelowTheEphemeralRange: where the machine leaves room
// below its ephemeral range, no port handed out lies in it.
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	lo, hi, ok := listenRange(ephemeralRangeFile)
	if !ok {
		t.Skipf("%s leaves no room below it", ephemeralRangeFile)
	}
	for range 200 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < lo || p >= hi {
			t.Fatalf("port %d, want one in [%d, %d), below the ephemeral range", p, lo, hi)
		}
	}
}
