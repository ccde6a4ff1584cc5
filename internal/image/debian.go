package image

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
)

// Debian describes a base image: a Debian root file system made by
// `debootstrap --variant=minbase` with Packages added, e.g.
// ca-certificates, python3 for a Python service, nodejs for Node.
type Debian struct {
	Suite    string   // bookworm when empty
	Packages []string // beyond minbase
	// Mirror is the archive debootstrap downloads from; empty is the one
	// this machine's apt uses for Suite. It is not part of the cache key:
	// every mirror serves the same packages.
	Mirror string
}

// Languages' usual extras for a Debian base on the local cluster; a Java
// or Node service whose study needs a newer runtime than Debian's gets the
// host's installation as a layer instead (HostPaths).
var (
	PythonPackages = []string{"ca-certificates", "python3"}
	JavaPackages   = []string{"ca-certificates", "openjdk-17-jre-headless"}
	NodePackages   = []string{"ca-certificates", "nodejs"}
)

func (d Debian) suite() string {
	if d.Suite == "" {
		return "bookworm"
	}
	return d.Suite
}

// packages are d's packages in one order, so that the order they were
// given in changes neither the cache key nor the image.
func (d Debian) packages() []string {
	pkgs := slices.Clone(d.Packages)
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// key names d's root file system in the cache: what decides its contents.
func (d Debian) key() string {
	h := sha256.Sum256([]byte(fmt.Sprintf("debootstrap minbase %s %s %q", d.suite(), runtime.GOARCH, d.packages())))
	return hex.EncodeToString(h[:])[:16]
}

// debootstrap is the command Store.Debian runs; tests put a fake in its place.
var debootstrap = "debootstrap"

// Debian returns the base image d describes: one layer holding its root
// file system. The layer is built once — debootstrap takes about a minute
// and downloads some 50 MB — and kept under Store.Dir by a hash of d, then
// reused by every later call, from any process.
func (s *Store) Debian(ctx context.Context, d Debian) (v1.Image, error) {
	file := filepath.Join(s.Dir, "bases", "debian-"+d.suite()+"-"+d.key()+".json")
	info, err := readInfo(file)
	if err != nil {
		if info, err = s.bootstrap(ctx, d); err == nil {
			err = writeInfo(file, info)
		}
		if err != nil {
			return nil, fmt.Errorf("debian base %s %v: %w", d.suite(), d.Packages, err)
		}
	}
	layer, err := openLayer(s.layers(), info, types.OCILayer)
	if err != nil {
		return nil, err
	}
	img, err := Scratch()
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{Created: v1.Time{Time: Epoch},
			CreatedBy: fmt.Sprintf("debootstrap --variant=minbase %s %s", d.suite(), strings.Join(d.packages(), " "))},
	})
	if err != nil {
		return nil, fmt.Errorf("debian base: %w", err)
	}
	// A shell's PATH: scratch has none, and the services' commands expect one.
	return configure(img, Config{Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}})
}

// bootstrap runs debootstrap into a directory of the store and packs it
// as a layer.
func (s *Store) bootstrap(ctx context.Context, d Debian) (blobInfo, error) {
	mirror := d.Mirror
	if mirror == "" {
		var err error
		if mirror, err = aptMirror(d.suite(), "/etc/apt/sources.list", "/etc/apt/sources.list.d"); err != nil {
			return blobInfo{}, err
		}
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return blobInfo{}, err
	}
	tmp, err := os.MkdirTemp(s.Dir, ".tmp-rootfs-")
	if err != nil {
		return blobInfo{}, err
	}
	// A root file system is some 200 MB: if msbench is killed while making
	// one, the next msbench's sweep removes it.
	lease.Take(lease.Dir, tmp)
	defer func() {
		os.RemoveAll(tmp)
		lease.Release(lease.Dir, tmp)
	}()
	rootfs := filepath.Join(tmp, "rootfs")
	args := []string{"--variant=minbase"}
	if pkgs := d.packages(); len(pkgs) > 0 {
		args = append(args, "--include="+strings.Join(pkgs, ","))
	}
	args = append(args, d.suite(), rootfs, mirror)
	logPath := filepath.Join(tmp, "debootstrap.log")
	if err := runIsolated(ctx, logPath, debootstrap, args...); err != nil {
		return blobInfo{}, fmt.Errorf("%s %s: %w\n%s", debootstrap, strings.Join(args, " "), err, proc.LogTail(logPath, 20))
	}
	// What apt keeps to install more: never used in an image, and a third
	// of its size.
	for _, glob := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "var/cache/apt/*.bin"} {
		matches, _ := filepath.Glob(filepath.Join(rootfs, glob))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				return blobInfo{}, err
			}
		}
	}
	l := Layer{Copies: []Copy{{Src: rootfs, Dest: "/"}}, KeepOwners: true}
	entries, err := l.entries()
	if err != nil {
		return blobInfo{}, err
	}
	return l.compress(s.layers(), entries)
}

// runIsolated runs a command in a mount namespace of its own (Go makes its
// mounts private), so that the /proc and /sys debootstrap mounts inside
// the new root vanish with it even when it is killed half-way, and in a
// process group of its own, killed whole when ctx ends.
func runIsolated(ctx context.Context, logPath, name string, args ...string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
		Unshareflags: syscall.CLONE_NEWNS,
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.Run()
}

// aptMirror finds the archive apt uses for suite in a sources.list file or
// a sources.list.d directory (one-line and deb822 formats).
func aptMirror(suite, list, dir string) (string, error) {
	files := []string{list}
	for _, pattern := range []string{"*.list", "*.sources"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		files = append(files, matches...)
	}
	for _, f := range files {
		if m := mirrorIn(f, suite); m != "" {
			return m, nil
		}
	}
	return "", fmt.Errorf("no apt source for %s in %s or %s: give Debian.Mirror", suite, list, dir)
}

func mirrorIn(file, suite string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	var uris, suites []string
	isDeb := false
	// A deb822 stanza ends at a blank line; the one-line format is one
	// source per line.
	stanza := func() string {
		defer func() { uris, suites, isDeb = nil, nil, false }()
		if isDeb && slices.Contains(suites, suite) && len(uris) > 0 {
			return uris[0]
		}
		return ""
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		switch {
		case line == "":
			if m := stanza(); m != "" {
				return m
			}
		case strings.HasPrefix(line, "#"):
		case fields[0] == "deb":
			// deb [options] URI SUITE COMPONENTS...
			rest := fields[1:]
			if len(rest) > 0 && strings.HasPrefix(rest[0], "[") {
				for len(rest) > 0 && !strings.HasSuffix(rest[0], "]") {
					rest = rest[1:]
				}
				if len(rest) > 0 {
					rest = rest[1:]
				}
			}
			if len(rest) >= 2 && rest[1] == suite {
				return rest[0]
			}
		default:
			key, value, _ := strings.Cut(line, ":")
			switch strings.ToLower(key) {
			case "types":
				isDeb = slices.Contains(strings.Fields(value), "deb")
			case "uris":
				uris = strings.Fields(value)
			case "suites":
				suites = strings.Fields(value)
			}
		}
	}
	return stanza()
}

// HostPaths is a layer holding host directories or files at the same paths
// in the image: the JDK 25 under /usr/lib/jvm or the Node installation the
// studies run with, which Debian's packages do not have.
func HostPaths(paths ...string) Layer {
	l := Layer{}
	for _, p := range paths {
		l.Copies = append(l.Copies, Copy{Src: p, Dest: p})
	}
	return l
}
