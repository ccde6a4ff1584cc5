package studyimage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
)

// Bases are the base images configured per language (Spec.Language): an
// image reference, fetched once and kept in the image store
// (image.Store.Remote). A language absent, or "", keeps Debian's minbase.
//
// A base configured for a language is taken to have that language's
// runtime on its PATH (node for node, java for java, python3 for python),
// so an image of the language leaves out what the plan gives it only for
// a runtime its service runs by name: this machine's installation (the
// Paths marked Runtime, and the Env whose PATH reaches them) or Debian's
// package; the base's own PATH, user and environment stay. Everything the
// service names by path is still copied at the same path: its build
// outputs, the files it names, and a JDK a script finds by a pattern —
// the Spring services' jdk.sh takes the first /usr/lib/jvm/*25* holding
// bin/java and bin/javac, which a JRE base such as eclipse-temurin does
// not hold there, so for the studies' Java services (and for native ones)
// a base replaces the operating system's layer only. The base must have
// /bin/sh (every command runs through it) and, for the Go services built
// with cgo, glibc. A service that also runs by name a runtime of another
// language than its image's is refused with a configured base, which is
// not said to have that runtime.
//
// A dependency's kind (deps.Kind: postgres, redis, ...) may be a key too,
// the base of that dependency's image (package deppod, which finds the
// kind's server programs in it); the languages and the kinds share no
// name.
type Bases map[string]string

// ParseBases reads the value of a flag giving bases, LANGUAGE=REFERENCE or
// DEPENDENCY=REFERENCE separated by commas
// (java=eclipse-temurin:25-jre,native=debian:12-slim,redis=redis:7-bookworm);
// "" is none.
func ParseBases(flag string) (Bases, error) {
	bases := Bases{}
	if strings.TrimSpace(flag) == "" {
		return bases, nil
	}
	var kinds []string
	for _, k := range deps.Kinds() {
		kinds = append(kinds, string(k))
	}
	for _, part := range strings.Split(flag, ",") {
		part = strings.TrimSpace(part)
		lang, ref, ok := strings.Cut(part, "=")
		switch {
		case !ok || ref == "":
			return nil, fmt.Errorf("base image %q: want LANGUAGE=REFERENCE or DEPENDENCY=REFERENCE, e.g. java=eclipse-temurin:25-jre or redis=redis:7-bookworm", part)
		case !slices.Contains(Languages, lang) && !slices.Contains(kinds, lang):
			return nil, fmt.Errorf("base image %q: unknown language or dependency %q (known languages: %s; dependencies: %s)",
				part, lang, strings.Join(Languages, ", "), strings.Join(kinds, ", "))
		case bases[lang] != "":
			return nil, fmt.Errorf("base image %q: a second base for %s (the first is %s)", part, lang, bases[lang])
		}
		if _, err := name.ParseReference(ref); err != nil {
			return nil, fmt.Errorf("base image %q: %w", part, err)
		}
		bases[lang] = ref
	}
	return bases, nil
}

// Build builds the images specs describe, each once, on its language's
// base: as the package's Build, with the bases configured.
func (b Bases) Build(ctx context.Context, store *image.Store, specs []Spec) ([]Built, error) {
	empty, err := emptyDir(store)
	if err != nil {
		return nil, err
	}
	out := make([]Built, 0, len(specs))
	for _, spec := range specs {
		base, spec, err := b.base(ctx, store, spec)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", spec.Name, err)
		}
		var layers []image.Layer
		for _, p := range spec.Paths {
			layers = append(layers, image.HostPaths(p.Path))
		}
		// The directory the command runs in, as the runner's; empty unless
		// a path above put files there.
		layers = append(layers, image.Layer{Copies: []image.Copy{{Src: empty, Dest: spec.Dir}}})
		img, err := store.Build(ctx, image.Spec{Base: base, Layers: layers, Config: image.Config{Env: spec.Env, WorkingDir: spec.Dir}})
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", spec.Name, err)
		}
		out = append(out, Built{Spec: spec, Image: img, Ref: ref(spec.Name, img)})
	}
	return out, nil
}

// base is spec's base image and spec as built on it: Debian's minbase
// with its packages, or the configured base without what it provides.
func (b Bases) base(ctx context.Context, store *image.Store, spec Spec) (v1.Image, Spec, error) {
	configured := b[spec.Language]
	if configured == "" {
		base, err := store.Debian(ctx, image.Debian{Packages: spec.Packages})
		return base, spec, err
	}
	if other := slices.DeleteFunc(slices.Clone(spec.Runtimes), func(l string) bool { return l == spec.Language }); len(other) > 0 {
		return nil, spec, fmt.Errorf("its service also runs %s by name, which the %s base %s is not said to have: configure no %s base for it",
			strings.Join(other, " and "), spec.Language, configured, spec.Language)
	}
	ref, err := name.ParseReference(configured)
	if err != nil {
		return nil, spec, fmt.Errorf("%s base: %w", spec.Language, err)
	}
	base, err := store.Remote(ctx, ref)
	if err != nil {
		return nil, spec, fmt.Errorf("%s base: %w", spec.Language, err)
	}
	spec.Packages, spec.Env = nil, nil
	spec.Paths = slices.DeleteFunc(slices.Clone(spec.Paths), func(p Path) bool { return p.Runtime })
	return base.Image, spec, nil
}
