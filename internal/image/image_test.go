package image

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// tree writes files (name → content; a "->" prefix makes a symlink) under
// a new directory, with the given mode for regular files.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func build(t *testing.T, store *Store, spec Spec) Image {
	t.Helper()
	img, err := store.Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img.Image); err != nil {
		t.Fatalf("invalid image: %v", err)
	}
	return img
}

func appLayer(dir string) Layer { return Layer{Copies: []Copy{{Src: dir, Dest: "/app"}}} }

func TestDigestIsReproducible(t *testing.T) {
	files := map[string]string{"server": "binary", "static/index.html": "<p>hi</p>", "static/link": "->index.html"}
	spec := func(dir string) Spec {
		return Spec{Layers: []Layer{appLayer(dir)}, Config: Config{Entrypoint: []string{"/app/server"}}}
	}
	first := build(t, &Store{Dir: t.TempDir()}, spec(tree(t, files)))

	// The same files made later, in another place, with other times and
	// owners, packed by another store: the same image.
	other := tree(t, files)
	later := time.Now().Add(time.Hour)
	for _, name := range []string{"server", "static/index.html", "static", "."} {
		if err := os.Chtimes(filepath.Join(other, name), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(other, "server"), 1234, 1234); err != nil && !os.IsPermission(err) {
		t.Fatal(err)
	}
	if again := build(t, &Store{Dir: t.TempDir()}, spec(other)); again.Digest != first.Digest {
		t.Fatalf("same files, digest %s then %s", first.Digest, again.Digest)
	}

	changes := []struct {
		name   string
		change func(dir string) error
	}{
		{"content", func(dir string) error { return os.WriteFile(filepath.Join(dir, "server"), []byte("binary2"), 0o644) }},
		{"mode", func(dir string) error { return os.Chmod(filepath.Join(dir, "server"), 0o755) }},
		{"new file", func(dir string) error { return os.WriteFile(filepath.Join(dir, "extra"), nil, 0o644) }},
		{"link target", func(dir string) error {
			p := filepath.Join(dir, "static/link")
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("other.html", p)
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, files)
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			if changed := build(t, &Store{Dir: t.TempDir()}, spec(dir)); changed.Digest == first.Digest {
				t.Fatalf("a changed %s kept digest %s", c.name, first.Digest)
			}
		})
	}
}

func TestLayerIsKeptAndReused(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	files := map[string]string{"server": "ELF"}
	first := build(t, store, Spec{Layers: []Layer{appLayer(tree(t, files))}})
	blobs, _ := filepath.Glob(filepath.Join(store.layers(), "sha256-*.tar.gz"))
	if len(blobs) != 1 {
		t.Fatalf("blobs %v, want one", blobs)
	}
	kept, err := os.Stat(blobs[0])
	if err != nil {
		t.Fatal(err)
	}
	again := build(t, store, Spec{Layers: []Layer{appLayer(tree(t, files))}})
	if now, err := os.Stat(blobs[0]); err != nil || !os.SameFile(kept, now) || again.Digest != first.Digest {
		t.Fatalf("the same files were compressed again (%v) or gave another image (%s, %s)", err, first.Digest, again.Digest)
	}

	// A blob whose info was never written (a build killed between the
	// two) is made again, not trusted.
	if err := os.Remove(blobs[0] + ".json"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blobs[0], []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	if remade := build(t, store, Spec{Layers: []Layer{appLayer(tree(t, files))}}); remade.Digest != first.Digest {
		t.Fatalf("remade %s, first %s", remade.Digest, first.Digest)
	}
	if left, _ := filepath.Glob(filepath.Join(store.layers(), ".tmp*")); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
}

// tarEntry is what a test checks of one entry of a layer.
type tarEntry struct {
	Type     byte
	Mode     int64
	Uid      int
	Link     string
	Content  string
	Modified time.Time
}

func layerEntries(t *testing.T, l v1.Layer) map[string]tarEntry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]tarEntry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = tarEntry{h.Typeflag, h.Mode, h.Uid, h.Linkname, string(content), h.ModTime.UTC()}
	}
}

func TestLayerHoldsExactlyTheFiles(t *testing.T) {
	dir := tree(t, map[string]string{"bin/server": "ELF", "etc/app.conf": "port=1", "current": "->bin/server"})
	for name, mode := range map[string]os.FileMode{"bin/server": 0o755 | os.ModeSetuid, "etc/app.conf": 0o600} {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "bin/server"), filepath.Join(dir, "bin/server-copy")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	single := tree(t, map[string]string{"tool": "#!/bin/sh"})
	img := build(t, &Store{Dir: t.TempDir()}, Spec{Layers: []Layer{{Copies: []Copy{
		{Src: dir, Dest: "/srv/app/"},
		{Src: filepath.Join(single, "tool"), Dest: "/usr/local/bin/tool"},
	}}}})
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	got := layerEntries(t, layers[0])
	dirMode := int64(0o755)
	if info, err := os.Stat(dir); err == nil {
		dirMode = int64(info.Mode().Perm())
	}
	want := map[string]tarEntry{
		"srv/":                    {Type: tar.TypeDir, Mode: 0o755},
		"srv/app/":                {Type: tar.TypeDir, Mode: dirMode},
		"srv/app/bin/":            {Type: tar.TypeDir, Mode: 0o755},
		"srv/app/bin/server":      {Type: tar.TypeReg, Mode: 0o4755, Content: "ELF"},
		"srv/app/bin/server-copy": {Type: tar.TypeLink, Mode: 0o4755, Link: "srv/app/bin/server"},
		"srv/app/current":         {Type: tar.TypeSymlink, Mode: 0o777, Link: "bin/server"},
		"srv/app/etc/":            {Type: tar.TypeDir, Mode: 0o755},
		"srv/app/etc/app.conf":    {Type: tar.TypeReg, Mode: 0o600, Content: "port=1"},
		"usr/":                    {Type: tar.TypeDir, Mode: 0o755},
		"usr/local/":              {Type: tar.TypeDir, Mode: 0o755},
		"usr/local/bin/":          {Type: tar.TypeDir, Mode: 0o755},
		"usr/local/bin/tool":      {Type: tar.TypeReg, Mode: 0o644, Content: "#!/bin/sh"},
	}
	for name, e := range want {
		e.Modified = Epoch
		want[name] = e
	}
	if !reflect.DeepEqual(got, want) {
		for name := range merged(got, want) {
			if got[name] != want[name] {
				t.Errorf("%s: got %+v, want %+v", name, got[name], want[name])
			}
		}
	}
}

func merged(a, b map[string]tarEntry) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func TestLayerRefusesWhatCannotBeCopied(t *testing.T) {
	file := filepath.Join(tree(t, map[string]string{"f": "x"}), "f")
	cases := []struct {
		name string
		copy Copy
		want string
	}{
		{"relative destination", Copy{Src: t.TempDir(), Dest: "app"}, `"app" is not absolute`},
		{"a file as the root", Copy{Src: file, Dest: "/"}, "a file cannot be the image's root"},
		{"a missing source", Copy{Src: filepath.Join(t.TempDir(), "missing"), Dest: "/app"}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := (&Store{Dir: t.TempDir()}).Build(context.Background(), Spec{Layers: []Layer{{Copies: []Copy{c.copy}}}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestKeepOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file another owner")
	}
	dir := tree(t, map[string]string{"mail": "x"})
	if err := os.Chown(filepath.Join(dir, "mail"), 8, 8); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		img := build(t, &Store{Dir: t.TempDir()}, Spec{Layers: []Layer{{Copies: []Copy{{Src: dir, Dest: "/var"}}, KeepOwners: keep}}})
		layers, _ := img.Layers()
		want := 0
		if keep {
			want = 8
		}
		if uid := layerEntries(t, layers[0])["var/mail"].Uid; uid != want {
			t.Errorf("KeepOwners %v: uid %d, want %d", keep, uid, want)
		}
	}
}

func TestConfigRoundTrips(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	base := build(t, store, Spec{Config: Config{
		Entrypoint: []string{"/bin/sh"}, Cmd: []string{"-c", "true"},
		Env: []string{"PATH=/bin", "LANG=C.UTF-8"}, WorkingDir: "/", User: "1000",
	}})
	cases := []struct {
		name   string
		config Config
		want   v1.Config
	}{
		{"kept from the base", Config{}, v1.Config{
			Entrypoint: []string{"/bin/sh"}, Cmd: []string{"-c", "true"},
			Env: []string{"PATH=/bin", "LANG=C.UTF-8"}, WorkingDir: "/", User: "1000",
		}},
		{"all set", Config{
			Entrypoint: []string{"/app/server"}, Cmd: []string{"--port", "8080"},
			Env: []string{"PATH=/app:/bin", "JAVA_HOME=/usr/lib/jvm/jdk"}, WorkingDir: "/app", User: "65532:65532",
		}, v1.Config{
			Entrypoint: []string{"/app/server"}, Cmd: []string{"--port", "8080"},
			Env: []string{"PATH=/app:/bin", "LANG=C.UTF-8", "JAVA_HOME=/usr/lib/jvm/jdk"}, WorkingDir: "/app", User: "65532:65532",
		}},
		{"a new entrypoint drops the base's arguments", Config{Entrypoint: []string{"/app/server"}}, v1.Config{
			Entrypoint: []string{"/app/server"},
			Env:        []string{"PATH=/bin", "LANG=C.UTF-8"}, WorkingDir: "/", User: "1000",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := build(t, store, Spec{Base: base.Image, Config: c.config})
			// Read back from the serialised config, as a runtime would.
			raw, err := img.RawConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			file, err := v1.ParseConfigFile(strings.NewReader(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(file.Config, c.want) {
				t.Errorf("config %+v, want %+v", file.Config, c.want)
			}
			if file.OS != "linux" || file.Architecture == "" || !file.Created.Time.Equal(Epoch) {
				t.Errorf("os %q arch %q created %v", file.OS, file.Architecture, file.Created)
			}
		})
	}
}

func TestLayerMediaTypeFollowsTheBase(t *testing.T) {
	dockerBase := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.DockerManifestSchema2), types.DockerConfigJSON)
	for _, c := range []struct {
		name string
		base v1.Image
		want types.MediaType
	}{
		{"scratch", nil, types.OCILayer},
		{"docker base", dockerBase, types.DockerLayer},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := build(t, &Store{Dir: t.TempDir()}, Spec{Base: c.base, Layers: []Layer{appLayer(tree(t, map[string]string{"a": "b"}))}})
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Layers[0].MediaType; got != c.want {
				t.Fatalf("layer %s on a %s manifest, want %s", got, m.MediaType, c.want)
			}
		})
	}
}

func TestArchiveReadsBack(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	img := build(t, store, Spec{
		Layers: []Layer{appLayer(tree(t, map[string]string{"server": "ELF"})), appLayer(tree(t, map[string]string{"data.json": "{}"}))},
		Config: Config{Entrypoint: []string{"/app/server"}},
	})
	file := filepath.Join(t.TempDir(), "img.tar")
	const ref = "msbench.local/gateway:v1"
	if err := img.WriteArchive(file, ref); err != nil {
		t.Fatal(err)
	}
	dir := untar(t, file)
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 1 {
		t.Fatalf("%d manifests in index.json", len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	if desc.Digest != img.Digest || desc.Annotations[containerdName] != ref || desc.Platform == nil || desc.Platform.OS != "linux" {
		t.Fatalf("index entry %+v, want digest %s named %s", desc, img.Digest, ref)
	}
	back, err := index.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(back); err != nil {
		t.Fatalf("archive's image: %v", err)
	}
	if d, _ := back.Digest(); d != img.Digest {
		t.Fatalf("read back %s, built %s", d, img.Digest)
	}

	if err := img.WriteArchive(file, "not a reference"); err == nil {
		t.Fatal("a malformed name was accepted")
	}
}

// untar unpacks an archive of regular files into a new directory.
func untar(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPushAndPull(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("registry on %s, not loopback", host)
	}
	store := &Store{Dir: t.TempDir()}
	base := build(t, store, Spec{Layers: []Layer{appLayer(tree(t, map[string]string{"lib.so": "lib"}))}})
	img := build(t, store, Spec{Base: base.Image, Layers: []Layer{appLayer(tree(t, map[string]string{"server": "ELF"}))}})
	ctx := context.Background()
	for _, i := range []Image{base, img} {
		ref := parse(t, fmt.Sprintf("%s/study/svc:%s", host, i.Digest.Hex[:12]))
		if err := i.Push(ctx, ref); err != nil {
			t.Fatal(err)
		}
		for _, pull := range []name.Reference{ref, parse(t, fmt.Sprintf("%s/study/svc@%s", host, i.Digest))} {
			got, err := Pull(ctx, pull)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := got.Digest(); err != nil || d != i.Digest {
				t.Fatalf("pulled %s: %s %v, pushed %s", pull, d, err, i.Digest)
			}
			if err := validate.Image(got); err != nil {
				t.Fatalf("pulled %s: %v", pull, err)
			}
		}
	}
	if _, err := Pull(ctx, parse(t, host+"/study/missing:v1")); err == nil {
		t.Fatal("pulled an image never pushed")
	}

	// A multi-platform base (as Docker Hub's are): this machine's image.
	var index v1.ImageIndex = empty.Index
	want := map[string]v1.Hash{}
	for _, arch := range []string{"arm64", runtime.GOARCH, "s390x"} {
		platform := &v1.Platform{OS: "linux", Architecture: arch}
		cfg, _ := img.ConfigFile()
		cfg = cfg.DeepCopy()
		cfg.Architecture = arch
		variant, err := mutate.ConfigFile(img.Image, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want[arch], _ = variant.Digest()
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: variant, Descriptor: v1.Descriptor{Platform: platform}})
	}
	multi := parse(t, host+"/library/base:multi")
	if err := remote.WriteIndex(multi, index, remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}
	got, err := Pull(ctx, multi)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != want[runtime.GOARCH] {
		t.Fatalf("pulled %s from a multi-platform index, want the %s image %s", d, runtime.GOARCH, want[runtime.GOARCH])
	}
}

// parse names an image of the test's registry, which serves plain HTTP.
func parse(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
