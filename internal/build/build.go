// Package build makes the artifacts of a study's services once and keeps
// them, keyed on a hash of their sources, so that a second run starts at
// once and a changed source is never run stale.
package build

import (
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
	"slices"
	"strings"
	"syscall"

	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/proc"
)

// skipped are directories that never hold sources: outputs, dependencies
// and version control.
var skipped = []string{".git", "node_modules", "target", "bin", ".cache", "build", "dist"}

// Cache builds into Dir/<name>-<hash>.
type Cache struct {
	Root string // the repository root, which build dirs are relative to
	Dir  string
	Vars map[string]string // placeholders besides {out}, e.g. root and data
}

// Result says where a build's artifacts are and whether they were reused.
type Result struct {
	Dir    string
	Hash   string
	Cached bool
}

// Spec is one build: a command run in a source directory, whose output
// goes to {out}.
type Spec struct {
	Name    string
	Dir     string // relative to Cache.Root
	Command string // run by sh in Dir; placeholders from Cache.Vars and {out}
	// Ignore lists path prefixes under Dir that do not change the build.
	Ignore []string
}

// Build returns the artifacts of b, building them if their sources changed.
func (c *Cache) Build(ctx context.Context, b Spec) (Result, error) {
	src := filepath.Join(c.Root, b.Dir)
	hash, err := Hash(src, b.Command, b.Ignore)
	if err != nil {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	out := filepath.Join(c.Dir, b.Name+"-"+hash[:16])
	if _, err := os.Stat(filepath.Join(out, ".complete")); err == nil {
		return Result{Dir: out, Hash: hash, Cached: true}, nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	tmp, err := os.MkdirTemp(c.Dir, ".tmp-"+b.Name+"-")
	if err != nil {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	defer os.RemoveAll(tmp)
	vars := map[string]string{"out": tmp}
	for k, v := range c.Vars {
		vars[k] = v
	}
	command, err := placeholder.Expand(b.Command, vars)
	if err != nil {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	logPath := out + ".log"
	if err := run(ctx, src, command, logPath); err != nil {
		return Result{}, fmt.Errorf("build %s: %s: %w\n%s", b.Name, command, err, proc.LogTail(logPath, 30))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(hash+"\n"), 0o644); err != nil {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	// Another run may have finished the same build meanwhile; theirs is as
	// good as ours.
	if err := os.Rename(tmp, out); err != nil && !os.IsExist(err) && !isNotEmpty(err) {
		return Result{}, fmt.Errorf("build %s: %w", b.Name, err)
	}
	return Result{Dir: out, Hash: hash}, nil
}

func isNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// run executes command with sh in dir, in its own process group so that a
// cancelled build leaves no compiler behind.
func run(ctx context.Context, dir, command, logPath string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.Run()
}

// Hash digests a build's inputs: the command and every source file's path,
// mode and content.
func Hash(dir, command string, ignore []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "command %q\n", command)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() && path != dir && (slices.Contains(skipped, d.Name()) || ignored(rel, ignore)) {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && !ignored(rel, ignore) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash sources %s: %w", dir, err)
	}
	slices.Sort(files)
	for _, rel := range files {
		info, err := os.Stat(filepath.Join(dir, rel))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %q %o\n", rel, info.Mode().Perm()&0o111)
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func ignored(rel string, ignore []string) bool {
	for _, p := range ignore {
		if rel == p || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
