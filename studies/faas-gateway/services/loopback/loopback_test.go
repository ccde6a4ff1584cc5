package loopback

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.1.2.3:8080", true},
		{"localhost:5555", true},
		{"[::1]:0", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.168.1.10:80", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		err := check(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("check(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
		}
	}
}

func TestListenRefusesAllInterfaces(t *testing.T) {
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
