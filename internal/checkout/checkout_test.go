package checkout

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootIsFoundFromBelow(t *testing.T) {
	root, err := Root("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "studies")); err != nil {
		t.Fatalf("root %s has no studies/: %v", root, err)
	}
	// A service module's go.mod is not the checkout's.
	t.Chdir(filepath.Join(root, "studies", "faas-gateway", "services"))
	if again, err := Root(""); err != nil || again != root {
		t.Fatalf("from a service module: %q, %v; want %q", again, err, root)
	}
}

func TestRootOutsideACheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Root(""); err == nil {
		t.Fatal("want an error outside a checkout")
	}
	if got, err := Root("."); err != nil || got == "" {
		t.Fatalf("a given root is taken as it is: %q, %v", got, err)
	}
}
