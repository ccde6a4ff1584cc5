// Package imagetest is what tests that build images share: the reasons
// to skip one on a Debian base, the repository's image store, and a
// registry on loopback.
package imagetest

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/image"
)

// Store skips a test that builds images on a Debian base where
// debootstrap cannot run (-short, not root, not installed), and returns
// the repository's store, where a warm run finds the bases.
func Store(t *testing.T) *image.Store {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds images on Debian bases (debootstrap, about a minute each the first time)")
	}
	if os.Geteuid() != 0 {
		t.Skip("debootstrap and chroot need root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Skip("debootstrap is not installed (apt-get install debootstrap)")
	}
	root, err := checkout.Root("")
	if err != nil {
		t.Fatal(err)
	}
	return &image.Store{Dir: filepath.Join(root, ".cache", "images")}
}

// Registry serves an in-process registry on 127.0.0.1 for the test's
// length, and returns its host:port and the count of requests it has
// answered (a cached image must not make one).
func Registry(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("registry on %s, not loopback", host)
	}
	return host, &requests
}

// PushBase builds a small base image — /etc/os-release, a PATH and a
// user of its own — and pushes it to ref, a registry's on loopback.
func PushBase(t *testing.T, ref string) image.Image {
	t.Helper()
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "os-release"), []byte("ID=test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base, err := (&image.Store{Dir: t.TempDir()}).Build(ctx, image.Spec{
		Layers: []image.Layer{{Copies: []image.Copy{{Src: files, Dest: "/etc"}}}},
		Config: image.Config{Env: []string{"PATH=/opt/base/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, User: "1000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Push(ctx, r); err != nil {
		t.Fatal(err)
	}
	return base
}
