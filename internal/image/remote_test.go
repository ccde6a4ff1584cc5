package image_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/image/imagetest"
)

// A base fetched by Remote is kept: a second fetch, by a store in another
// process as much as this one, asks the registry nothing and gives the
// same image; a blob lost from the store is fetched again.
func TestRemoteIsKept(t *testing.T) {
	host, requests := imagetest.Registry(t)
	ctx := context.Background()
	pushed := imagetest.PushBase(t, host+"/base:1")
	for _, ref := range []string{host + "/base:1", host + "/base@" + pushed.Digest.String()} {
		t.Run(ref, func(t *testing.T) {
			r, err := name.ParseReference(ref)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			fetch := func(asks bool) {
				t.Helper()
				before := requests.Load()
				img, err := (&image.Store{Dir: dir}).Remote(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				if img.Digest != pushed.Digest {
					t.Fatalf("fetched %s, pushed %s", img.Digest, pushed.Digest)
				}
				if err := validate.Image(img.Image); err != nil {
					t.Fatal(err)
				}
				if n := requests.Load() - before; (n > 0) != asks {
					t.Fatalf("%d requests to the registry; one expected: %v", n, asks)
				}
			}
			fetch(true)
			fetch(false)
			layers, _ := pushed.Layers()
			digest, _ := layers[0].Digest()
			if err := os.Remove(filepath.Join(dir, "blobs", "sha256-"+digest.Hex)); err != nil {
				t.Fatal(err)
			}
			fetch(true)
			fetch(false)
		})
	}
	missing, _ := name.ParseReference(host + "/missing:1")
	if _, err := (&image.Store{Dir: t.TempDir()}).Remote(ctx, missing); err == nil {
		t.Fatal("fetched an image never pushed")
	}
}
