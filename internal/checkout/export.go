package checkout

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/msbench/msbench/internal/lease"
)

// Export is a clean copy of one commit of a checkout, made to build and
// run it beside the working tree (msbench ab's BASE): only what the commit
// holds, none of the working tree's changes, builds or ignored files.
type Export struct {
	Dir    string // the copy's root
	Ref    string // as asked, e.g. origin/main
	Commit string // what Ref named when the copy was made
}

// String says what the copy is, e.g. "origin/main (3f2a1b09c4d1)".
func (e *Export) String() string { return fmt.Sprintf("%s (%.12s)", e.Ref, e.Commit) }

// Remove deletes the copy. A copy that will not go keeps its lease: the
// next msbench removes it.
func (e *Export) Remove() error {
	if err := os.RemoveAll(e.Dir); err != nil {
		return fmt.Errorf("remove the copy of %s: %w", e, err)
	}
	lease.Release(lease.Dir, e.Dir)
	return nil
}

// ExportRef copies the tree of ref in the git repository at root into a
// new temporary directory, leased so that the next msbench removes it if
// this one dies before Remove.
func ExportRef(ctx context.Context, root, ref string) (*Export, error) {
	if strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("git ref %q: a ref does not begin with '-'", ref)
	}
	commit, err := git(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("git ref %q names no commit in %s: %w", ref, root, err)
	}
	e := &Export{Ref: ref, Commit: strings.TrimSpace(string(commit))}
	if e.Dir, err = os.MkdirTemp("", "msbench-checkout-"); err != nil {
		return nil, fmt.Errorf("copy of %s: %w", ref, err)
	}
	lease.Take(lease.Dir, e.Dir)
	cmd := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", e.Commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		err = untar(out, e.Dir)
		// What git says matters more than what a cut stream did to untar.
		if werr := cmd.Wait(); werr != nil {
			err = fmt.Errorf("git archive: %w: %s", werr, strings.TrimSpace(stderr.String()))
		}
	}
	if err != nil {
		// The failure says why; a failure to clean up after it would hide it.
		_ = e.Remove()
		return nil, fmt.Errorf("copy of %s: %w", e, err)
	}
	return e, nil
}

// git runs a git command in root and returns what it printed.
func git(ctx context.Context, root string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && stderr.Len() > 0 {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, err
}

// untar writes the archive's directories, files and symbolic links below
// dir; a name that would land outside it is refused.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(h.Name, "/"))
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // git's commit id, not a file
		}
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q lies outside the copy", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode).Perm())
		default:
			err = fmt.Errorf("archive entry %q: unexpected type %q", h.Name, h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
