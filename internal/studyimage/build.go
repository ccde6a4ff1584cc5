package studyimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/msbench/msbench/internal/image"
)

// Registry is the name every image of a plan is given for the local
// cluster, where nothing is pulled (imagePullPolicy Never).
const Registry = "msbench.local"

// Built is one image of a plan, built.
type Built struct {
	// Spec is what the image holds: the plan's, on a configured base
	// without what the base provides (Bases).
	Spec  Spec
	Image image.Image
	// Ref is msbench.local/NAME:DIGEST12: the name it is imported under
	// and a pod names it by; a registry stores it by Image.Digest.
	Ref string
}

// Build builds the images specs describe, each once, on Debian's minbase
// (Bases.Build takes others). Every host path is a layer of its own, so
// that a JDK or a build output shared by several images is compressed once
// and stored once on a node.
func Build(ctx context.Context, store *image.Store, specs []Spec) ([]Built, error) {
	return Bases(nil).Build(ctx, store, specs)
}

func ref(name string, img image.Image) string {
	return Registry + "/" + name + ":" + img.Digest.Hex[:12]
}

// emptyDir is a directory with nothing in it, the source of a working
// directory's entry.
func emptyDir(store *image.Store) (string, error) {
	dir := filepath.Join(store.Dir, "empty")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	return dir, os.Chmod(dir, 0o755)
}

// PullPolicy is how a pod's image named ref is had: one imported into the
// local cluster (Registry's) is never pulled, as no registry holds it;
// one pushed is pulled when the node lacks it.
func PullPolicy(ref string) corev1.PullPolicy {
	if strings.HasPrefix(ref, Registry+"/") {
		return corev1.PullNever
	}
	return corev1.PullIfNotPresent
}

// WriteArchive writes the image into dir as NAME-DIGEST12.tar, the archive
// `ctr -n k8s.io images import` takes, named Ref; it returns the file.
func (b Built) WriteArchive(dir string) (string, error) {
	file := filepath.Join(dir, b.Spec.Name+"-"+b.Image.Digest.Hex[:12]+".tar")
	return file, b.Image.WriteArchive(file, b.Ref)
}

// For is the image the service of the variant (its Key) runs in, or nil.
func For(built []Built, variant, service string) *Built {
	for i := range built {
		if slices.Contains(built[i].Spec.Uses, Use{Variant: variant, Service: service}) {
			return &built[i]
		}
	}
	return nil
}

// GeneratorBinary is where the generator image holds msbench.
const GeneratorBinary = "/usr/local/bin/msbench"

// Generator builds the generator image: msbench from the repository at
// root, static on scratch with this machine's CA certificates, its
// entrypoint `msbench generate` (the backend adds --spec and --out).
func Generator(ctx context.Context, store *image.Store, root string) (Built, error) {
	img, err := store.GoStatic(ctx, image.GoBinary{Dir: root, Pkg: "./cmd/msbench", Path: GeneratorBinary, Args: []string{"generate"}, CACerts: true})
	if err != nil {
		return Built{}, fmt.Errorf("generator image: %w", err)
	}
	spec := Spec{Name: "msbench-generator", Paths: []Path{{Path: GeneratorBinary, Why: "msbench generate"}}, Dir: "/"}
	return Built{Spec: spec, Image: img, Ref: ref(spec.Name, img)}, nil
}
