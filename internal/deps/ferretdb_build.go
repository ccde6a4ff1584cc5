package deps

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/msbench/msbench/internal/proc"
)

// buildFerretDB returns the FerretDB program built from root's
// tools/ferretdb, building it on first use into root/.cache/builds, keyed
// on a hash of its sources so that a changed source is never run stale.
// (internal/build cannot be used: it depends on the study model, which
// depends on this package.)
func buildFerretDB(ctx context.Context, root string) (string, error) {
	goPath, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go not found: msbench builds its MongoDB stand-in (%s) with the Go toolchain; put go on PATH", ferretDBSource)
	}
	src := filepath.Join(root, ferretDBSource)
	hash, err := hashSources(src)
	if err != nil {
		return "", fmt.Errorf("build ferretdb: %w", err)
	}
	cache := filepath.Join(root, ".cache", "builds")
	out := filepath.Join(cache, "ferretdb-"+hash[:16])
	bin := filepath.Join(out, "ferretdb")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("build ferretdb: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, ".tmp-ferretdb-")
	if err != nil {
		return "", fmt.Errorf("build ferretdb: %w", err)
	}
	defer os.RemoveAll(tmp)
	err = runOnce(ctx, proc.Spec{
		Name:    "go build ferretdb",
		Path:    goPath,
		Args:    []string{"build", "-buildvcs=false", "-o", filepath.Join(tmp, "ferretdb"), "."},
		Dir:     src,
		LogPath: filepath.Join(tmp, "build.log"),
	})
	if err != nil {
		return "", fmt.Errorf("build ferretdb: %w", err)
	}
	// A concurrent build may have finished first; its result is as good.
	if err := os.Rename(tmp, out); err != nil && !isExecutable(bin) {
		return "", fmt.Errorf("build ferretdb: %w", err)
	}
	return bin, nil
}

// hashSources digests every regular file under dir: path and content.
func hashSources(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q\n", rel)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no %s in %s: is it an msbench checkout?", ferretDBSource, filepath.Dir(filepath.Dir(dir)))
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// findRoot returns the nearest directory upwards from the working directory
// whose go.mod is msbench's.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			wd, _ := os.Getwd()
			return "", fmt.Errorf("no msbench checkout (go.mod of module %s) in %s or above: the MongoDB stand-in is built from the checkout's %s", module, wd, ferretDBSource)
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}
