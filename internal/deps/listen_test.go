package deps

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/proc"
)

func TestListenAndPasswordOptions(t *testing.T) {
	tests := []struct {
		listen, password string
		wantErr          string // empty: accepted
	}{
		{"", "", ""},
		{"10.1.2.3:5432", "", ""},
		{"[fd00::5]:6379", "", ""},
		{"127.0.0.1:1", strings.Repeat("aZ9", 6), ""},
		{"10.1.2.3", "", "missing port"},
		{"pg.example:5432", "", "must be an IP address"},
		{"0.0.0.0:5432", "", "not 0.0.0.0"},
		{"[::]:5432", "", "not ::"},
		{"10.1.2.3:0", "", "1 to 65535"},
		{"10.1.2.3:65536", "", "1 to 65535"},
		{"10.1.2.3:http", "", "1 to 65535"},
		{"", "short", "at least 16"},
		{"", "sixteen-chars-but-dash", "other than a letter or digit"},
		{"", "quote'" + strings.Repeat("a", 20), "other than a letter or digit"},
	}
	for _, tt := range tests {
		t.Run(tt.listen+"/"+tt.password, func(t *testing.T) {
			e, err := newEnv(Postgres, Options{Listen: tt.listen, Password: tt.password})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), tt.password) && tt.password != "" {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.listen == "" {
				if e.host != loopback || e.fixed {
					t.Errorf("host %s fixed %v, want loopback and a free port", e.host, e.fixed)
				}
			} else if e.addr() != tt.listen {
				t.Errorf("addr %s, want %s", e.addr(), tt.listen)
			}
			if tt.password != "" && e.password() != tt.password {
				t.Errorf("password is not the one given")
			}
			if tt.password == "" && CheckPassword(e.password()) != nil {
				t.Errorf("a fresh password fails CheckPassword: %v", CheckPassword(e.password()))
			}
		})
	}
}

// A PostgreSQL listening on another address than 127.0.0.1, as on a pod's
// IP, admits a client from another address with the password: initdb's
// pg_hba.conf alone refuses it. The client's address is 127.0.0.3, a
// stand-in for another pod that stays on loopback.
func TestPostgresListeningElsewhereAdmitsOtherAddresses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	port, err := new(proc.PortAllocator).Next()
	if err != nil {
		t.Fatal(err)
	}
	password := newPassword()
	in, err := Start(ctx, Postgres, Options{Listen: "127.0.0.2:" + strconv.Itoa(port), Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if in.Values["host"] != "127.0.0.2" || in.Values["password"] != password || in.Addr != "127.0.0.2:"+strconv.Itoa(port) {
		t.Fatalf("values name host %s, addr %s, and the password given: %v", in.Values["host"], in.Addr, in.Values["password"] == password)
	}
	cfg, err := pgx.ParseConfig(in.URL)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
	cfg.DialFunc = dialer.DialContext
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect from 127.0.0.3: %v", err)
	}
	defer conn.Close(ctx)
	var from string
	if err := conn.QueryRow(ctx, "SELECT host(inet_client_addr())").Scan(&from); err != nil {
		t.Fatal(err)
	}
	if from != "127.0.0.3" {
		t.Errorf("the server saw the client at %s, so the test proves nothing", from)
	}
}
