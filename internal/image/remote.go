package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Remote returns the image ref names, for this machine's platform, as Pull
// fetches it with the credentials of the machine's Docker config (opts
// add or override options), and keeps it in the store: every blob by its
// digest under Dir/blobs, and what ref resolved to under Dir/bases. A
// later call with the same reference, from any process, contacts no
// registry — as `docker build` uses an image it holds: a tag moved since
// is not seen; name the base by digest (REPOSITORY@sha256:...) to pin it,
// or remove its bases/remote-*.json file to fetch the tag again. A
// registry on this machine (localhost, 127.0.0.1) or a private network is
// spoken to over plain HTTP, as go-containerregistry does.
func (s *Store) Remote(ctx context.Context, ref name.Reference, opts ...remote.Option) (Image, error) {
	file := filepath.Join(s.Dir, "bases", "remote-"+remoteKey(ref)+".json")
	var resolved struct {
		Ref    string  `json:"ref"`
		Digest v1.Hash `json:"digest"`
	}
	if data, err := os.ReadFile(file); err == nil && json.Unmarshal(data, &resolved) == nil {
		if img, err := s.cached(resolved.Digest); err == nil {
			return img, nil
		}
	}
	opts = append([]remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	pulled, err := Pull(ctx, ref, opts...)
	if err != nil {
		return Image{}, err
	}
	digest, err := s.keep(pulled)
	if err != nil {
		return Image{}, fmt.Errorf("base %s: %w", ref, err)
	}
	resolved.Ref, resolved.Digest = ref.Name(), digest
	err = writeAtomic(file, func(w io.Writer) error { return json.NewEncoder(w).Encode(resolved) }, nil)
	if err != nil {
		return Image{}, fmt.Errorf("base %s: %w", ref, err)
	}
	return s.cached(digest)
}

// remoteKey names what a reference resolved to for this machine's
// platform (a multi-platform index resolves to one of its images).
func remoteKey(ref name.Reference) string {
	h := sha256.Sum256([]byte(ref.Name() + " linux/" + runtime.GOARCH))
	return hex.EncodeToString(h[:])[:16]
}

// blobs is where the store keeps the blobs of the images Remote fetched,
// each named by its digest.
func (s *Store) blobs() string { return filepath.Join(s.Dir, "blobs") }

func (s *Store) blob(h v1.Hash) string { return filepath.Join(s.blobs(), h.Algorithm+"-"+h.Hex) }

// keep writes img's layers, config and manifest into the store, the
// manifest last, so that an image whose manifest is kept is whole.
func (s *Store) keep(img v1.Image) (v1.Hash, error) {
	layers, err := img.Layers()
	if err != nil {
		return v1.Hash{}, err
	}
	type blob struct {
		digest v1.Hash
		open   func() (io.ReadCloser, error)
	}
	var blobs []blob
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return v1.Hash{}, err
		}
		blobs = append(blobs, blob{digest, l.Compressed})
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	digest := digestOf(manifest)
	blobs = append(blobs, blob{digestOf(config), bytesOpener(config)}, blob{digest, bytesOpener(manifest)})
	for _, b := range blobs {
		if err := s.keepBlob(b.digest, b.open); err != nil {
			return v1.Hash{}, err
		}
	}
	return digest, nil
}

func digestOf(b []byte) v1.Hash {
	h := sha256.New()
	h.Write(b)
	return sum(h)
}

// keepBlob writes the blob open reads, unless the store has it, checking
// that its content has the digest it is named by: a registry's answer is
// trusted no further than that.
func (s *Store) keepBlob(digest v1.Hash, open func() (io.ReadCloser, error)) error {
	file := s.blob(digest)
	if _, err := os.Stat(file); err == nil {
		return nil
	}
	return writeAtomic(file, func(w io.Writer) error {
		r, err := open()
		if err != nil {
			return err
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), r); err != nil {
			return err
		}
		if got := sum(h); got != digest {
			return fmt.Errorf("blob %s has digest %s", digest, got)
		}
		return nil
	}, nil)
}

// cached is the image of the store whose manifest has digest, if the
// store holds it whole.
func (s *Store) cached(digest v1.Hash) (Image, error) {
	raw, err := os.ReadFile(s.blob(digest))
	if err != nil {
		return Image{}, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Image{}, fmt.Errorf("manifest %s: %w", digest, err)
	}
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		if _, err := os.Stat(s.blob(d.Digest)); err != nil {
			return Image{}, err
		}
	}
	img, err := partial.CompressedToImage(&storedImage{store: s, raw: raw, manifest: &m})
	if err != nil {
		return Image{}, err
	}
	return Image{Image: img, Digest: digest}, nil
}

// storedImage is an image whose blobs the store holds.
type storedImage struct {
	store    *Store
	raw      []byte
	manifest *v1.Manifest
}

func (i *storedImage) RawManifest() ([]byte, error) { return i.raw, nil }

func (i *storedImage) RawConfigFile() ([]byte, error) {
	return os.ReadFile(i.store.blob(i.manifest.Config.Digest))
}

// MediaType is the manifest's; an OCI manifest may leave it out.
func (i *storedImage) MediaType() (types.MediaType, error) {
	if i.manifest.MediaType == "" {
		return types.OCIManifestSchema1, nil
	}
	return i.manifest.MediaType, nil
}

func (i *storedImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, d := range i.manifest.Layers {
		if d.Digest == h {
			return storedBlob{file: i.store.blob(h), desc: d}, nil
		}
	}
	return nil, fmt.Errorf("no layer %s in the image", h)
}

// storedBlob is a layer blob the store holds, as its manifest describes it.
type storedBlob struct {
	file string
	desc v1.Descriptor
}

func (b storedBlob) Digest() (v1.Hash, error)            { return b.desc.Digest, nil }
func (b storedBlob) Size() (int64, error)                { return b.desc.Size, nil }
func (b storedBlob) MediaType() (types.MediaType, error) { return b.desc.MediaType, nil }
func (b storedBlob) Compressed() (io.ReadCloser, error)  { return os.Open(b.file) }
