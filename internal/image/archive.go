package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// containerdName is the annotation by which `ctr images import` names an
// image of an OCI archive; without it ctr makes up a name from the
// ref.name annotation and an "import-DATE" prefix.
const containerdName = "io.containerd.image.name"

// WriteArchive writes the image as an OCI image layout in one tar file, the
// archive `ctr -n k8s.io images import FILE` takes, named ref (a full
// reference such as msbench.local/gateway:v1, which a pod's image field then
// gives with imagePullPolicy Never). The manifest is stored as built, so the
// image containerd imports keeps Digest. A layout directory is not written
// first: a copied toolchain layer can be hundreds of megabytes.
func (i Image) WriteArchive(file, ref string) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	err = writeAtomic(file, func(w io.Writer) error { return i.writeLayout(w, tag.String()) }, nil)
	if err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	return nil
}

func (i Image) writeLayout(w io.Writer, ref string) error {
	manifest, err := i.RawManifest()
	if err != nil {
		return err
	}
	mediaType, err := i.MediaType()
	if err != nil {
		return err
	}
	cfg, err := i.ConfigFile()
	if err != nil {
		return err
	}
	config, err := i.RawConfigFile()
	if err != nil {
		return err
	}
	configName, err := i.ConfigName()
	if err != nil {
		return err
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mediaType,
			Size:      int64(len(manifest)),
			Digest:    i.Digest,
			Platform:  &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant},
			Annotations: map[string]string{
				containerdName:                      ref,
				"org.opencontainers.image.ref.name": ref,
			},
		}},
	})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	small := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(i.Digest), manifest},
		{blobPath(configName), config},
	}
	for _, f := range small {
		if err := writeEntry(tw, f.name, int64(len(f.data)), bytesOpener(f.data)); err != nil {
			return err
		}
	}
	layers, err := i.Layers()
	if err != nil {
		return err
	}
	written := map[v1.Hash]bool{}
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return err
		}
		if written[digest] {
			continue
		}
		written[digest] = true
		size, err := l.Size()
		if err != nil {
			return err
		}
		if err := writeEntry(tw, blobPath(digest), size, l.Compressed); err != nil {
			return err
		}
	}
	return tw.Close()
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

func bytesOpener(b []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// writeEntry writes one file of the layout, its size checked: a layer that
// changed since it was measured would otherwise give a corrupt archive.
func writeEntry(tw *tar.Writer, name string, size int64, open func() (io.ReadCloser, error)) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: Epoch}); err != nil {
		return err
	}
	r, err := open()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer r.Close()
	n, err := io.Copy(tw, r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("%s: %d bytes, expected %d", name, n, size)
	}
	return nil
}

// Push writes the image to a registry under ref (name.ParseReference; with
// name.Insecure for a registry served over plain HTTP); the registry stores
// it by Digest, which a pod can name as REPOSITORY@DIGEST. opts carry the
// registry's credentials (remote.WithAuthFromKeychain) or transport.
func (i Image) Push(ctx context.Context, ref name.Reference, opts ...remote.Option) error {
	if err := remote.Write(ref, i.Image, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// Pull fetches an image from a registry for this machine's platform
// (linux and its architecture); Store.Remote keeps what it fetches.
func Pull(ctx context.Context, ref name.Reference, opts ...remote.Option) (v1.Image, error) {
	opts = append([]remote.Option{
		remote.WithContext(ctx),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}),
	}, opts...)
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	return img, nil
}
