package loopback

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		addr  string
		podIP string
		ok    bool
	}{
		{"127.0.0.1:0", "", true},
		{"127.1.2.3:8080", "", true},
		{"localhost:5555", "", true},
		{"[::1]:0", "", true},
		{":8080", "", false},
		{"0.0.0.0:8080", "", false},
		{"[::]:8080", "", false},
		{"192.168.1.10:80", "", false},
		{"example.com:80", "", false},
		{"127.0.0.1", "", false},
		// In a pod: its own address, and nothing else but loopback.
		{"10.244.0.7:8080", "10.244.0.7", true},
		{"[fd00::7]:8080", "fd00::7", true},
		{"127.0.0.1:8080", "10.244.0.7", true},
		{"10.244.0.8:8080", "10.244.0.7", false},
		{"10.244.0.7:8080", "", false},
		{":8080", "10.244.0.7", false},
		{"0.0.0.0:8080", "10.244.0.7", false},
		{"0.0.0.0:8080", "0.0.0.0", false},
		{"[::]:8080", "::", false},
		{"example.com:80", "example.com", false},
		{"10.244.0.7:8080", "not an address", false},
	}
	for _, tt := range tests {
		err := check(tt.addr, tt.podIP)
		if (err == nil) != tt.ok {
			t.Errorf("check(%q, pod %q) = %v, want ok=%v", tt.addr, tt.podIP, err, tt.ok)
		}
	}
}

func TestListenRefusesAllInterfaces(t *testing.T) {
	t.Setenv(PodIPEnv, "")
	if ln, err := Listen(":0"); err == nil {
		ln.Close()
		t.Fatal("Listen(\":0\") succeeded, want refusal")
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen on loopback: %v", err)
	}
	ln.Close()
}
