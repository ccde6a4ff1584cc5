package fanout

import (
	"archive/tar"
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/results"
)

// TestOutputsRoundTrip: WriteOutputs and ReadOutputs carry a directory's
// plain files, and no writer's hidden temporary.
func TestOutputsRoundTrip(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"summary.json": "{}", "records.parquet": strings.Repeat("r", 100000), "generator.json": "{\"share\":1}"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, ".records.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteOutputs(&buf, results.StepDir(src)); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := ReadOutputs(&buf, results.StepDir(dst)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dst)
	if len(entries) != len(files) {
		t.Errorf("%d files unpacked, want %d", len(entries), len(files))
	}
	for name, text := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != text {
			t.Errorf("%s: %d bytes, %v; want %d", name, len(got), err, len(text))
		}
	}
}

// TestReadOutputsRefusesWhatIsNotAPlainFile: a stream from a pod cannot
// write outside the directory, leave a link, or pass for an output when
// empty.
func TestReadOutputsRefusesWhatIsNotAPlainFile(t *testing.T) {
	tests := []struct {
		name string
		hdr  *tar.Header
		want string
	}{
		{"parent", &tar.Header{Typeflag: tar.TypeReg, Name: "../evil", Size: 1}, "not a plain file"},
		{"absolute", &tar.Header{Typeflag: tar.TypeReg, Name: "/etc/evil", Size: 1}, "not a plain file"},
		{"nested", &tar.Header{Typeflag: tar.TypeReg, Name: "a/b", Size: 1}, "not a plain file"},
		{"link", &tar.Header{Typeflag: tar.TypeSymlink, Name: "summary.json", Linkname: "/etc/passwd"}, "not a plain file"},
		{"directory", &tar.Header{Typeflag: tar.TypeDir, Name: "d"}, "not a plain file"},
		{"empty", nil, "no file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			if tt.hdr != nil {
				tw.WriteHeader(tt.hdr)
				if tt.hdr.Size > 0 {
					tw.Write([]byte("x"))
				}
			}
			tw.Close()
			parent := t.TempDir()
			err := ReadOutputs(&buf, results.StepDir(filepath.Join(parent, "out")))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			if _, err := os.Lstat(filepath.Join(parent, "evil")); err == nil {
				t.Error("a file was written outside the directory")
			}
		})
	}
}

// TestDialAddr: a fetch dials the address it checked, within the
// cluster's networks, on this machine, or named by the study.
func TestDialAddr(t *testing.T) {
	s := Spec{ClusterNetworks: []netip.Prefix{netip.MustParsePrefix("10.88.0.0/16")}, AllowHosts: []string{"192.0.2.7"}}
	tests := []struct {
		addr, want, err string
	}{
		{"127.0.0.1:80", "127.0.0.1:80", ""},
		{"[::1]:8080", "[::1]:8080", ""},
		{"10.88.1.2:8080", "10.88.1.2:8080", ""},
		{"192.0.2.7:80", "192.0.2.7:80", ""},
		{"localhost:81", "", ""}, // resolves to loopback, whichever first
		{"10.89.0.1:80", "", "neither on this machine nor inside the cluster"},
		{"192.0.2.8:80", "", "neither on this machine nor inside the cluster"},
		{"127.0.0.1:99999", "", "not a number"},
	}
	for _, tt := range tests {
		ap, err := s.dialAddr(context.Background(), tt.addr)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, %v; want an error saying %q", tt.addr, ap, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.addr, err)
		case tt.want != "" && ap.String() != tt.want:
			t.Errorf("%s: dials %s, want %s", tt.addr, ap, tt.want)
		case !ap.Addr().IsLoopback() && tt.want == "":
			t.Errorf("%s: dials %s, want a loopback address", tt.addr, ap)
		}
	}
}
