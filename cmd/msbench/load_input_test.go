package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Hostile inputs to msbench load: each is refused with one line and exit 2,
// at once, before anything is sent. The URL is a closed port on loopback,
// so that even a broken check would send nothing anywhere.
func TestLoadRefusesHostileInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Sparse: over the cap without the disk space.
	if err := os.Truncate(huge, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:1/"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"body from /dev/zero", []string{"-n", "1", "--body", "@/dev/zero", url}, "--body: /dev/zero is a device, not a regular file"},
		{"form file /dev/zero", []string{"-n", "1", "--form", "f=@/dev/zero", url}, "--form: form field f: /dev/zero is a device"},
		{"body from a FIFO", []string{"-n", "1", "--body", "@" + fifo, url}, "a named pipe, not a regular file"},
		{"form file a FIFO", []string{"-n", "1", "--form", "f=@" + fifo, url}, "a named pipe, not a regular file"},
		{"body over 64 MiB", []string{"-n", "1", "--body", "@" + huge, url}, "larger than the 64 MiB a request body may hold"},
		{"form over 64 MiB", []string{"-n", "1", "--form", "f=@" + huge, url}, "larger than the 64 MiB"},
		{"a million users", []string{"-u", "1000000", "-n", "10", url}, "1000000 users: at most 100000"},
		{"request line in the method", []string{"-n", "1", "-m", "GET / HTTP/1.1\r\nX-Inj: yes\r\n\r\nGET", url}, `--method: method "GET / HTTP/1.1\r\nX-INJ: YES\r\n\r\nGET": want an HTTP token`},
		{"space in the method", []string{"-n", "1", "-m", "GE T", url}, `method "GE T": want an HTTP token`},
		{"empty method", []string{"-n", "1", "-m", "", url}, `method "": want an HTTP token`},
		{"CRLF in a header name", []string{"-n", "1", "-H", "X-A\r\nX-Inj: 1", url}, `--header: header name "X-A\r\nX-Inj": want an HTTP token`},
		{"CRLF in a header value", []string{"-n", "1", "-H", "X-A: 1\r\nX-Inj: 1", url}, `control character '\r'`},
		{"think past every bound", []string{"--think", "1000000h", "-n", "2", "-u", "1", url}, "think time up to 1000000h0m0s reaches the load's time bound, 1h0m0s"},
		{"think past the duration", []string{"--think", "500ms-2s", "-d", "1s", url}, "reaches the load's time bound, 1s"},
		{"endless timeout", []string{"--timeout", "1000000h", "-n", "1", url}, "a timeout of 1000000h0m0s: at most 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, context.Background(), append([]string{"load", "-q"}, tt.args...), tt.want)
		})
	}
}

// Off-machine targets are refused unless allowed. The context is cancelled
// before the run: were the check broken, the load would stop before its
// first request (exit 130), so this test never sends off the machine.
func TestLoadRefusesRemoteTargets(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"TEST-NET address", "http://192.0.2.1:9/", "target 192.0.2.1"},
		{"https", "https://192.0.2.1/", "target 192.0.2.1"},
		{"IPv6 documentation address", "http://[2001:db8::1]:9/", "target 2001:db8::1"},
		{"unspecified address", "http://0.0.0.0:9/", "target 0.0.0.0"},
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, cancelled, []string{"load", "-q", "-n", "1", "-u", "1", tt.url}, tt.want+" is not on this machine (loopback): msbench loads another machine only when allowed (msbench load --allow-remote)")
		})
	}
}

// refused runs msbench and wants exit 2 with one line holding want. (A
// FIFO once blocked the read for ever: the test's own timeout ends that.)
func refused(t *testing.T, ctx context.Context, args []string, want string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	msg := stderr.String()
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, msg)
	}
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) {
		t.Fatalf("stderr %q: want one line holding %q", msg, want)
	}
}
