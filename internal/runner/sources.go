package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/msbench/msbench/internal/study"
)

// Sources deploys some variants of a run from other checkouts of its
// study than the run's own, so that two builds of one study are measured
// side by side in one run (msbench ab): a variant whose value on Axis
// names one of Trees is built and deployed from that checkout, its
// services, builds and {root} the checkout's; every other variant from
// the run's Root and study. The load, the steps and the report are the
// run's study's either way: one generator measures both.
type Sources struct {
	Axis  string
	Trees map[string]Tree
}

// Tree is a checkout of the study: its root, the study file as read
// there with the run's profile, and what it is (a ref and its commit),
// which the run's provenance keeps.
type Tree struct {
	Root  string
	Study *study.Study
	What  string
}

// source is what a checkout's variants are deployed with.
type source struct {
	study  *study.Study
	values map[string]string // the lab's at build time, with the checkout's root and build.NAME
}

// buildSources builds every other checkout's builds from its own root,
// into the cache they share with the run's (an unchanged service hashes
// the same and is not built twice), and returns their hashes keyed
// TREE/BUILD.
func (l *Lab) buildSources(ctx context.Context, src Sources, cacheDir string) (map[string]string, error) {
	hashes := map[string]string{}
	l.sources = map[string]source{}
	l.sourceAxis = src.Axis
	for _, name := range slices.Sorted(maps.Keys(src.Trees)) {
		t := src.Trees[name]
		// The lab's placeholders (data, tokens) with the checkout's root:
		// a build command may read any of them, as the run's own builds do.
		values := maps.Clone(l.values)
		values["root"] = t.Root
		built, err := l.buildInto(ctx, t.Study, cacheDir, values, name+"/")
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", src.Axis, name, err)
		}
		for b, h := range built {
			hashes[name+"/"+b] = h
		}
		l.sources[name] = source{study: t.Study, values: values}
	}
	return hashes, nil
}

// checkout is what variant v is deployed with: s and the lab's values, or
// for a variant of another checkout that checkout's study and values.
func (l *Lab) checkout(s *study.Study, v study.Variant) (*study.Study, map[string]string) {
	src, ok := l.sources[v.Get(l.sourceAxis)]
	if l.sourceAxis == "" || !ok {
		return s, l.values
	}
	values := maps.Clone(l.values)
	maps.Copy(values, src.values)
	return src.study, values
}
