package studyimage

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/image/imagetest"
)

func TestParseBases(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want Bases
		err  []string // in the error
	}{
		{flag: "", want: Bases{}},
		{flag: "java=eclipse-temurin:25-jre", want: Bases{Java: "eclipse-temurin:25-jre"}},
		{flag: "native=127.0.0.1:5000/base:1, node=node@sha256:" + strings.Repeat("a", 64),
			want: Bases{Native: "127.0.0.1:5000/base:1", Node: "node@sha256:" + strings.Repeat("a", 64)}},
		{flag: "java=eclipse-temurin:25-jre,postgres=postgres:16-bookworm,redis=redis:7-bookworm,rabbitmq=rabbitmq:3.13,mariadb=mariadb:11,mongo=postgres:16-bookworm",
			want: Bases{Java: "eclipse-temurin:25-jre", "postgres": "postgres:16-bookworm", "redis": "redis:7-bookworm",
				"rabbitmq": "rabbitmq:3.13", "mariadb": "mariadb:11", "mongo": "postgres:16-bookworm"}},
		{flag: "ruby=ruby:3", err: []string{`"ruby=ruby:3"`, "unknown language or dependency", "java, native, node, python", "mariadb, mongo, postgres, rabbitmq, redis"}},
		{flag: "mysql=mysql:8", err: []string{`"mysql=mysql:8"`, "unknown language or dependency", "mariadb, mongo, postgres, rabbitmq, redis"}},
		{flag: "redis=redis:7,redis=valkey:8", err: []string{`"redis=valkey:8"`, "second base for redis", "redis:7"}},
		{flag: "java=a:1,debian:12", err: []string{`"debian:12"`, "LANGUAGE=REFERENCE"}},
		{flag: "python=", err: []string{`"python="`, "LANGUAGE=REFERENCE"}},
		{flag: "node=a:1,node=b:1", err: []string{`"node=b:1"`, "second base for node", "a:1"}},
		{flag: "native=Not A Reference", err: []string{`"native=Not A Reference"`}},
	} {
		got, err := ParseBases(tc.flag)
		if tc.err != nil {
			if err == nil {
				t.Errorf("%q: %v, want an error", tc.flag, got)
				continue
			}
			for _, part := range tc.err {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("%q: error %q does not say %s", tc.flag, err, part)
				}
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.flag, got, err, tc.want)
		}
		for lang, ref := range tc.want {
			if got[lang] != ref {
				t.Errorf("%q: %s base %q, want %q", tc.flag, lang, got[lang], ref)
			}
		}
	}
}

func layerDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []v1.Hash
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// files lists the paths an image's file system holds, by tar (found on
// PATH before the test changed it).
func files(t *testing.T, tar string, img v1.Image) []string {
	t.Helper()
	list := exec.Command(tar, "-t")
	list.Stdin = mutate.Extract(img)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("list the image's files: %v", err)
	}
	var paths []string
	for _, f := range strings.Fields(string(out)) {
		paths = append(paths, "/"+strings.TrimSuffix(f, "/"))
	}
	return paths
}

// A configured base, fetched from a registry, is the first layers of the
// images of its language, with the plan's layers on top; the environment
// is the base's; a node base leaves out the host's node, which the image
// would otherwise copy; the second build asks the registry nothing.
func TestBuildOnConfiguredBase(t *testing.T) {
	host, requests := imagetest.Registry(t)
	base := imagetest.PushBase(t, host+"/base:1")
	tar, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar to list an image's files")
	}
	bin, opt := fakeRuntimes(t)
	nativeRoot, natives, err := planOne(t, "{build.b}/server", map[string]string{"out/server": "\x7fELF"})
	if err != nil {
		t.Fatal(err)
	}
	_, nodes, err := planOne(t, "node {root}/main.js", map[string]string{"main.js": ""})
	if err != nil {
		t.Fatal(err)
	}
	specs := []Spec{natives[0], nodes[0]}
	specs[0].Name, specs[1].Name = "p-native", "p-node"
	if specs[0].Language != Native || specs[1].Language != Node || len(specs[1].Env) == 0 {
		t.Fatalf("planned %s and %s (env %q), want native and node with a PATH to %s", specs[0].Language, specs[1].Language, specs[1].Env, bin)
	}
	bases := Bases{Native: host + "/base:1", Node: host + "/base:1"}
	store := &image.Store{Dir: t.TempDir()}
	ctx := context.Background()
	built, err := bases.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	if requests.Load() == 0 {
		t.Fatal("the base was not fetched from the registry")
	}
	baseLayers := layerDigests(t, base.Image)
	baseCfg, _ := base.ConfigFile()
	for _, b := range built {
		layers := layerDigests(t, b.Image.Image)
		if len(layers) <= len(baseLayers) || !slices.Equal(layers[:len(baseLayers)], baseLayers) {
			t.Errorf("%s: layers %v, want the base's %v first", b.Spec.Name, layers, baseLayers)
		}
		cfg, err := b.Image.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cfg.Config.Env, baseCfg.Config.Env) || cfg.Config.User != "1000" || cfg.Config.WorkingDir != b.Spec.Dir {
			t.Errorf("%s: env %q, user %q, dir %s; want the base's %q, 1000, %s", b.Spec.Name, cfg.Config.Env, cfg.Config.User, cfg.Config.WorkingDir, baseCfg.Config.Env, b.Spec.Dir)
		}
		if cfg.OS != "linux" || cfg.Architecture != baseCfg.Architecture {
			t.Errorf("%s: platform %s/%s", b.Spec.Name, cfg.OS, cfg.Architecture)
		}
	}
	native := files(t, tar, built[0].Image.Image)
	for _, want := range []string{"/etc/os-release", filepath.Join(nativeRoot, "out", "server")} {
		if !slices.Contains(native, want) {
			t.Errorf("the native image lacks %s", want)
		}
	}
	for _, f := range files(t, tar, built[1].Image.Image) {
		if within(f, bin) || within(f, opt) {
			t.Errorf("the node image holds %s, the host's node, which its base provides", f)
		}
	}

	before := requests.Load()
	again, err := bases.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("the second build made %d requests to the registry", n)
	}
	for i := range again {
		if again[i].Image.Digest != built[i].Image.Digest {
			t.Errorf("%s: built %s, then %s", specs[i].Name, built[i].Image.Digest, again[i].Image.Digest)
		}
	}

	// A service that also runs another language's runtime by name: the
	// base is not said to have it.
	_, both, err := planOne(t, "{build.b}/run.sh", map[string]string{"out/run.sh": "#!/usr/bin/env python3\nnode x\n"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bases.Build(ctx, store, both)
	if err == nil || !strings.Contains(err.Error(), "python") || !strings.Contains(err.Error(), host+"/base:1") {
		t.Errorf("a node image also running python3 on a node base: %v, want an error naming python and the base", err)
	}
}

// An image whose language has no base configured is on Debian's minbase,
// as before bases could be configured, and no registry is asked.
func TestBuildMinbaseWithoutBase(t *testing.T) {
	store := imagetest.Store(t)
	host, requests := imagetest.Registry(t)
	_, specs, err := planOne(t, "{build.b}/server", map[string]string{"out/server": "\x7fELF"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	built, err := Bases{Java: host + "/base:1"}.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	minbase, err := store.Debian(ctx, image.Debian{})
	if err != nil {
		t.Fatal(err)
	}
	want := layerDigests(t, minbase)
	if got := layerDigests(t, built[0].Image.Image); !slices.Equal(got[:len(want)], want) {
		t.Errorf("layers %v, want Debian's minbase %v first", got, want)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests to the registry for a java base no image needs", n)
	}
}
