package deppod

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	goredis "github.com/redis/go-redis/v9"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/study"
)

// Redis's image on a base from a registry that keeps redis-server where
// the official redis image does, not where Debian's package does: Debian's
// image with a layer that moves the program to /usr/local/bin (its bytes
// at the new path, a whiteout at the old) and names a user of its own,
// pushed to a registry on loopback. The image built on it starts with the
// base's layers, runs the agent as root with --bin /usr/local/bin, and its
// pod on the local cluster serves Redis with the Secret's password.
func TestDependencyPodOnBase(t *testing.T) {
	store := imagetest.Store(t)
	c := testCluster(t)
	root := filepath.Dir(filepath.Dir(store.Dir))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	debian, err := store.Debian(ctx, image.Debian{Suite: suite, Packages: packages[deps.Redis]})
	if err != nil {
		t.Fatal(err)
	}
	base := movedRedis(t, debian)
	b, err := BuildOn(ctx, store, root, deps.Redis, pushed(ctx, t, base, "redis-elsewhere:7"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{Binary, "dependency", "redis", "--bin", "/usr/local/bin"}; !slices.Equal(cfg.Config.Entrypoint, want) || cfg.Config.User != "0" {
		t.Errorf("entrypoint %q as user %q, want %q as 0", cfg.Config.Entrypoint, cfg.Config.User, want)
	}
	baseLayers, builtLayers := digests(t, base), digests(t, b.Image.Image)
	if len(builtLayers) <= len(baseLayers) || !slices.Equal(builtLayers[:len(baseLayers)], baseLayers) {
		t.Fatalf("the image's layers %v do not start with the base's %v", builtLayers, baseLayers)
	}

	ns := imported(ctx, t, c, b)
	p, err := Deploy(ctx, ns, "cache", deps.Redis, b.Ref, study.Limits{CPUs: 0.5, MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
	}()
	pod, err := ns.Client().CoreV1().Pods(ns.Name).Get(ctx, p.PodName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].ImageID != "sha256:"+configDigest(t, b.Image.Image) {
		t.Errorf("the pod's image %+v, want the built one's, sha256:%s", pod.Status.ContainerStatuses, configDigest(t, b.Image.Image))
	}

	values := p.Values()
	for _, password := range []string{values["password"], "wrong-" + values["password"]} {
		opts, err := goredis.ParseURL(values["url"])
		if err != nil {
			t.Fatal(err)
		}
		opts.Password, opts.Dialer, opts.MaxRetries = password, c.DialContext, -1
		client := goredis.NewClient(opts)
		pong, err := client.Ping(ctx).Result()
		client.Close()
		if right := password == values["password"]; right && (err != nil || pong != "PONG") || !right && err == nil {
			t.Errorf("PING with the right password %v: %q, %v", right, pong, err)
		}
	}
}

// MariaDB's image on a base from a registry, Debian's image itself, whose
// programs are in two directories: the agent is given both (--bin
// /usr/sbin:/usr/bin) and runs in the image.
func TestDependencyOnBaseInTwoDirectories(t *testing.T) {
	if os.Getenv("MSBENCH_ALL_DEPENDENCY_IMAGES") == "" {
		t.Skip("MariaDB's image costs a Debian base of its own; MSBENCH_ALL_DEPENDENCY_IMAGES=1 runs it")
	}
	store := imagetest.Store(t)
	root := filepath.Dir(filepath.Dir(store.Dir))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	debian, err := store.Debian(ctx, image.Debian{Suite: suite, Packages: packages[deps.MariaDB]})
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildOn(ctx, store, root, deps.MariaDB, pushed(ctx, t, debian, "mariadb-debian:11"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{Binary, "dependency", "mariadb", "--bin", "/usr/sbin:/usr/bin"}; !slices.Equal(cfg.Config.Entrypoint, want) {
		t.Fatalf("entrypoint %q, want %q", cfg.Config.Entrypoint, want)
	}
	runInImage(ctx, t, b.Image, cfg.Config.Entrypoint, cfg.Config.Env, mariadbVersion)
}

// pushed pushes img as repo (NAME:TAG) to a registry of the test's own
// on loopback, and returns its reference there.
func pushed(ctx context.Context, t *testing.T, img v1.Image, repo string) string {
	t.Helper()
	host, _ := imagetest.Registry(t)
	ref, err := name.ParseReference(host + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}
	return ref.String()
}

// movedRedis is debian with redis-server moved to /usr/local/bin (Debian's
// is a link to redis-check-rdb, the program that acts as the server by the
// name it is run by) and the user redis named as the image's.
func movedRedis(t *testing.T, debian v1.Image) v1.Image {
	t.Helper()
	const original = "/usr/bin/redis-check-rdb"
	fs, err := readTree(debian, original)
	if err != nil {
		t.Fatal(err)
	}
	program := fs.files[original]
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "usr/local/bin/redis-server", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(program))},
		{Name: "usr/bin/.wh.redis-server", Typeflag: tar.TypeReg, Mode: 0o644},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write(program); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layers, err := debian.Layers()
	if err != nil {
		t.Fatal(err)
	}
	mediaType, err := layers[0].MediaType()
	if err != nil {
		t.Fatal(err)
	}
	moved, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil },
		tarball.WithMediaType(mediaType))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(debian, moved)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.User = "redis"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	return img
}

func digests(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

func configDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(d.Hex)
}
