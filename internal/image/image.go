// Package image builds OCI images of a study's services without a Docker
// engine: a base (scratch, a cached Debian root file system, or an image
// pulled from a registry), layers copied from the project's builds and host
// toolchains, and a config. Images are reproducible — the same inputs give
// the same digest — and leave as an OCI archive that `ctr images import`
// takes, or are pushed to a registry.
//
// A Kubernetes backend calls it so:
//
//	store := &image.Store{Dir: filepath.Join(root, ".cache", "images")}
//	base, err := store.Debian(ctx, image.Debian{Packages: []string{"ca-certificates"}})
//	img, err := store.Build(ctx, image.Spec{
//		Base:   base,
//		Layers: []image.Layer{{Copies: []image.Copy{{Src: buildDir, Dest: "/app"}}}},
//		Config: image.Config{Entrypoint: []string{"/app/server"}, WorkingDir: "/app"},
//	})
//	// the local cluster: ctr -n k8s.io images import gateway.tar, then a pod
//	// with image msbench.local/gateway:TAG and imagePullPolicy Never
//	err = img.WriteArchive("gateway.tar", "msbench.local/gateway:"+img.Digest.Hex[:12])
//	// a real cluster: the pod names REPOSITORY@img.Digest
//	ref, err := name.ParseReference("registry.example/gateway:tag")
//	err = img.Push(ctx, ref, remote.WithAuthFromKeychain(authn.DefaultKeychain))
//
// A Java or Node service adds the host's runtime as a layer at the same
// path (HostPaths("/usr/lib/jvm/temurin-25-jdk-amd64")). A base configured
// by reference comes from Store.Remote instead of Store.Debian: fetched
// once, then kept in the store like a Debian base.
package image

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Store keeps the layers and bases it builds under Dir, so that a second
// build of the same files compresses nothing.
type Store struct {
	Dir string
}

// layers is where the store keeps layer blobs, each named by its diffID.
func (s *Store) layers() string { return filepath.Join(s.Dir, "layers") }

// Config is what the image runs, as in an OCI image config.
type Config struct {
	Entrypoint []string
	Cmd        []string
	Env        []string // KEY=value; a base's variables with the same key are replaced
	WorkingDir string
	User       string // user or uid[:gid]; empty is the base's (root on scratch)
}

// Spec is one image: Base (nil is scratch) with Layers on top and Config.
type Spec struct {
	Base   v1.Image
	Layers []Layer
	Config Config
}

// Image is a built image and the digest of its manifest, which is what a
// registry, containerd and a pod's imageID name it by.
type Image struct {
	v1.Image
	Digest v1.Hash
}

// Scratch is the empty image in OCI media types, for the architecture of
// this machine (whose builds the layers hold).
func Scratch() (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("scratch image: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("scratch image: %w", err)
	}
	return img, nil
}

// Build makes the image spec describes.
func (s *Store) Build(ctx context.Context, spec Spec) (Image, error) {
	img := spec.Base
	if img == nil {
		var err error
		if img, err = Scratch(); err != nil {
			return Image{}, err
		}
	}
	layerType, err := layerMediaType(img)
	if err != nil {
		return Image{}, err
	}
	for i, l := range spec.Layers {
		if err := ctx.Err(); err != nil {
			return Image{}, err
		}
		layer, err := l.build(s.layers(), layerType)
		if err != nil {
			return Image{}, fmt.Errorf("image layer %d: %w", i+1, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:   layer,
			History: v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "msbench: " + l.describe()},
		})
		if err != nil {
			return Image{}, fmt.Errorf("image layer %d: %w", i+1, err)
		}
	}
	img, err = configure(img, spec.Config)
	if err != nil {
		return Image{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return Image{}, fmt.Errorf("image digest: %w", err)
	}
	return Image{Image: img, Digest: digest}, nil
}

// layerMediaType is the type of the layers added to base: a Docker
// manifest (a base pulled from Docker Hub) lists Docker layers, which some
// registries insist on, an OCI manifest OCI layers.
func layerMediaType(base v1.Image) (types.MediaType, error) {
	mt, err := base.MediaType()
	if err != nil {
		return "", fmt.Errorf("base image: %w", err)
	}
	if mt == types.DockerManifestSchema2 {
		return types.DockerLayer, nil
	}
	return types.OCILayer, nil
}

// describe names a layer's copies for the image's history.
func (l Layer) describe() string {
	s := "copy"
	for _, c := range l.Copies {
		s += " " + c.Dest
	}
	return s
}

// configure sets c on img, keeping the base's settings c leaves empty, and
// the creation time at Epoch.
func configure(img v1.Image, c Config) (v1.Image, error) {
	file, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	file = file.DeepCopy()
	file.Created = v1.Time{Time: Epoch}
	cfg := &file.Config
	if c.Entrypoint != nil {
		cfg.Entrypoint = c.Entrypoint
		// As Docker does: a new entrypoint drops the base's arguments.
		cfg.Cmd = nil
	}
	if c.Cmd != nil {
		cfg.Cmd = c.Cmd
	}
	cfg.Env = mergeEnv(cfg.Env, c.Env)
	if c.WorkingDir != "" {
		cfg.WorkingDir = c.WorkingDir
	}
	if c.User != "" {
		cfg.User = c.User
	}
	img, err = mutate.ConfigFile(img, file)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return img, nil
}

// mergeEnv returns base with each of over's variables set, replacing the
// one of the same name in place, appending the others.
func mergeEnv(base, over []string) []string {
	out := slices.Clone(base)
	for _, kv := range over {
		key, _, _ := strings.Cut(kv, "=")
		i := slices.IndexFunc(out, func(old string) bool { k, _, _ := strings.Cut(old, "="); return k == key })
		if i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}
