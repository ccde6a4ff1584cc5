package deppod

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/studyimage"
)

// Binary is where a dependency image holds msbench, its entrypoint.
const Binary = "/usr/local/bin/msbench"

// VolumeDir is where a dependency's pod mounts an emptyDir, so that a
// restart in place (SIGUSR1) keeps the data and a new pod starts from
// nothing, as a local run's dependency does.
const VolumeDir = "/var/lib/msbench-dependency"

// DataDir is the dependency's private directory in its pod, which Args
// gives: in the emptyDir, not the mount point itself, which the agent
// could not remove when it stops (it would exit 1, "device or resource
// busy").
const DataDir = VolumeDir + "/data"

// suite is the Debian release of the images: this machine's, whose
// packages `make deps` installs and the tests of package deps run.
const suite = "bookworm"

// postgresBin is where bookworm's PostgreSQL 15 keeps its programs; the
// mongo image puts FerretDB beside them, for --bin to find all three.
const postgresBin = "/usr/lib/postgresql/15/bin"

// packages are each kind's Debian packages, as `make deps` installs them.
var packages = map[deps.Kind][]string{
	deps.Postgres: {"postgresql"},
	deps.Redis:    {"redis-server"},
	deps.RabbitMQ: {"rabbitmq-server"},
	deps.MariaDB:  {"mariadb-server"},
	deps.Mongo:    {"postgresql"},
}

// Build builds kind's image for the local cluster: Debian bookworm's
// minbase with kind's packages (cached by the store), msbench from the
// checkout at root built static at Binary, and the entrypoint `msbench
// dependency KIND`. Mongo adds FerretDB from the checkout's tools/ferretdb,
// built static. Its Ref is msbench.local/msbench-KIND:DIGEST12.
func Build(ctx context.Context, store *image.Store, root string, kind deps.Kind) (studyimage.Built, error) {
	pkgs, ok := packages[kind]
	if !ok {
		_, err := deps.ParseKind(string(kind))
		return studyimage.Built{}, fmt.Errorf("dependency image: %w", err)
	}
	img, err := store.Debian(ctx, image.Debian{Suite: suite, Packages: pkgs})
	if err != nil {
		return studyimage.Built{}, fmt.Errorf("image msbench-%s: %w", kind, err)
	}
	var bin []string
	if kind == deps.Mongo {
		bin = []string{postgresBin}
	}
	return build(ctx, store, root, kind, img, bin, image.Config{}, studyimage.Spec{Packages: pkgs})
}

// BuildOn builds kind's image as Build does, but on base, an image
// reference (a --base-image DEPENDENCY=REFERENCE: postgres:16-bookworm,
// redis:7-bookworm, ...), fetched once and kept in the store
// (image.Store.Remote), in place of Debian's; "" is Build's. The agent runs
// the base's own server programs, which Programs finds in it, a base
// lacking them being refused before anything is deployed; the entrypoint
// names their directories (--bin), and mongo's FerretDB goes beside the
// base's PostgreSQL. The image runs as root, whatever user the base names,
// for the agent to prepare the data directory and run each server as its
// system user; the base's environment (its PATH) stays.
func BuildOn(ctx context.Context, store *image.Store, root string, kind deps.Kind, base string) (studyimage.Built, error) {
	if base == "" {
		return Build(ctx, store, root, kind)
	}
	fail := func(err error) (studyimage.Built, error) {
		return studyimage.Built{}, fmt.Errorf("image msbench-%s: %w", kind, err)
	}
	ref, err := name.ParseReference(base)
	if err != nil {
		return fail(fmt.Errorf("base %s: %w", base, err))
	}
	img, err := store.Remote(ctx, ref)
	if err != nil {
		return fail(fmt.Errorf("base %s: %w", base, err))
	}
	bin, err := Programs(base, img.Image, kind)
	if err != nil {
		return fail(err)
	}
	return build(ctx, store, root, kind, img.Image, bin, image.Config{User: "0"}, studyimage.Spec{})
}

// build puts msbench (and mongo's FerretDB, in bin's first directory) on
// img, with the entrypoint `msbench dependency KIND` and --bin when bin is
// set; spec says what img gives.
func build(ctx context.Context, store *image.Store, root string, kind deps.Kind, img v1.Image, bin []string, cfg image.Config, spec studyimage.Spec) (studyimage.Built, error) {
	repo := "msbench-" + string(kind)
	fail := func(err error) (studyimage.Built, error) {
		return studyimage.Built{}, fmt.Errorf("image %s: %w", repo, err)
	}
	bins := []image.GoBinary{{Dir: root, Pkg: "./cmd/msbench", Path: Binary}}
	cfg.Entrypoint = []string{Binary, "dependency", string(kind)}
	if kind == deps.Mongo {
		bins = append(bins, image.GoBinary{Dir: filepath.Join(root, "tools", "ferretdb"), Pkg: ".", Path: bin[0] + "/ferretdb"})
	}
	if len(bin) > 0 {
		cfg.Entrypoint = append(cfg.Entrypoint, "--bin", strings.Join(bin, ":"))
	}
	for _, b := range bins {
		static, err := store.GoStatic(ctx, b)
		if err != nil {
			return fail(err)
		}
		layers, err := static.Layers()
		if err != nil {
			return fail(err)
		}
		if img, err = mutate.AppendLayers(img, layers...); err != nil {
			return fail(err)
		}
	}
	built, err := store.Build(ctx, image.Spec{Base: img, Config: cfg})
	if err != nil {
		return fail(err)
	}
	spec.Name, spec.Dir = repo, "/"
	for _, b := range bins {
		spec.Paths = append(spec.Paths, studyimage.Path{Path: b.Path, Why: "built static from " + b.Pkg})
	}
	return studyimage.Built{Spec: spec, Image: built, Ref: studyimage.Registry + "/" + repo + ":" + built.Digest.Hex[:12]}, nil
}

// Args are the arguments a pod gives the entrypoint: listen on the pod's
// IP, which the pod spec passes as the environment variable POD_IP
// (fieldRef status.podIP; Kubernetes expands $(POD_IP) in args), at port,
// the one its Service names, with its data in DataDir.
func Args(port int) []string {
	return []string{"--listen", "$(POD_IP):" + strconv.Itoa(port), "--dir", DataDir}
}
