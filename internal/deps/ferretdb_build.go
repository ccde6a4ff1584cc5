package deps

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/msbench/msbench/internal/build"
)

// buildFerretDB returns the FerretDB program built from root's
// tools/ferretdb, through the same source-hashed build cache as a study's
// services, so that a changed source is never run stale.
func buildFerretDB(ctx context.Context, root string) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("go not found: msbench builds its MongoDB stand-in (%s) with the Go toolchain; put go on PATH", ferretDBSource)
	}
	if _, err := os.Stat(filepath.Join(root, ferretDBSource)); err != nil {
		return "", fmt.Errorf("no %s in %s: is it an msbench checkout?", ferretDBSource, root)
	}
	cache := &build.Cache{Root: root, Dir: filepath.Join(root, ".cache", "builds")}
	res, err := cache.Build(ctx, build.Spec{
		Name:    "ferretdb",
		Dir:     ferretDBSource,
		Command: "go build -buildvcs=false -o {out}/ferretdb .",
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(res.Dir, "ferretdb"), nil
}
