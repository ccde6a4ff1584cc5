// Package imagetest is what tests that build images on a Debian base
// share: the reasons to skip, and the repository's image store.
package imagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
