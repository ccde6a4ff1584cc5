package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/image"
)

// KubernetesVersion is the version of the components the cluster runs,
// pinned by the nested module in internal/cluster/kube.
const KubernetesVersion = "v1.30.14"

// kubeModule is the nested module holding the components, relative to
// the checkout.
const kubeModule = "internal/cluster/kube"

// versionFlags stamp the version the components report (the node's
// kubelet version, the API server's /version), which a build from the
// module proxy leaves at v0.0.0-master.
var versionFlags = func() string {
	const pkg = "k8s.io/component-base/version."
	major, minor, _ := strings.Cut(strings.TrimPrefix(KubernetesVersion, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	return "-X " + pkg + "gitVersion=" + KubernetesVersion + " -X " + pkg + "gitMajor=" + major +
		" -X " + pkg + "gitMinor=" + minor + " -X " + pkg + "gitTreeState=clean"
}()

// sourceKey is a digest of the files a build reads, of its flags and of
// the Go that builds them, so that a cached output is reused exactly while
// they stay the same.
func sourceKey(ctx context.Context, flags string, files ...string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, flags)
	goVersion, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	h.Write(goVersion)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("build input: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// goBuild builds pkg (a directory) into out with -trimpath, stripped,
// with extra linker flags. -trimpath keeps the compiled packages the same
// whatever the checkout's path, so the build cache serves every checkout.
// It takes Go's own cgo default for this machine, not the caller's
// CGO_ENABLED (make turns cgo off for msbench's builds): the cache key
// does not hold the setting, so the output must not depend on who built it.
func goBuild(ctx context.Context, dir, pkg, out string, ldflags string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w "+ldflags, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CGO_ENABLED=")
	}), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = log, io.MultiWriter(log, &stderr)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// cached returns the path of name in a cache directory of its own for
// key, building it with build when it is not there yet. Earlier keys'
// directories are removed: only the current sources' output is kept.
func cached(cacheDir, prefix, key, name string, build func(tmp string) error) (string, error) {
	dir := filepath.Join(cacheDir, prefix+key)
	out := filepath.Join(dir, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	tmp := out + ".tmp"
	if err := build(tmp); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, prefix+"*"))
	for _, o := range old {
		if o != dir {
			os.RemoveAll(o)
		}
	}
	return out, nil
}

// kubeBinary returns the multi-call binary of the Kubernetes components,
// built from the checkout's nested module the first time and whenever
// that module changes.
func kubeBinary(ctx context.Context, source, cacheDir string, log io.Writer) (string, error) {
	mod := filepath.Join(source, kubeModule)
	key, err := sourceKey(ctx, versionFlags, filepath.Join(mod, "go.mod"), filepath.Join(mod, "go.sum"), filepath.Join(mod, "main.go"))
	if err != nil {
		return "", err
	}
	return cached(cacheDir, "kube-"+KubernetesVersion+"-", key, "kube", func(tmp string) error {
		fmt.Fprintf(log, "building Kubernetes %s (the first build takes several minutes)\n", KubernetesVersion)
		return goBuild(ctx, mod, ".", tmp, versionFlags, log)
	})
}

// StaticImage builds the Go main package pkg of the msbench checkout at
// source into a FROM-scratch image holding the binary alone as /name, its
// entrypoint, and writes the image's archive, named ref, to archive.
// Layers are kept in the image store under cacheDir.
func StaticImage(ctx context.Context, source, cacheDir, pkg, name, ref, archive string, log io.Writer) error {
	store := &image.Store{Dir: filepath.Join(cacheDir, "images")}
	img, err := store.GoStatic(ctx, image.GoBinary{Dir: source, Pkg: pkg, Path: "/" + name, Log: log})
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	return img.WriteArchive(archive, ref)
}

// pauseArchive returns the sandbox image's archive, built when its source
// changes.
func pauseArchive(ctx context.Context, source, cacheDir string, log io.Writer) (string, error) {
	const pkg = "./internal/cluster/pause"
	key, err := sourceKey(ctx, "static", filepath.Join(source, pkg, "main.go"))
	if err != nil {
		return "", err
	}
	return cached(cacheDir, "pause-", key, "pause.tar", func(tmp string) error {
		return StaticImage(ctx, source, cacheDir, pkg, "pause", pauseImage, tmp, log)
	})
}
