package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/msbench/msbench/internal/build"
	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/resources"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/tokens"
)

// Lab is what every deployment of a run shares: the placeholders of the
// run (root, data, builds, datasets, tokens), the ports, the accountant,
// a temporary root and the CPU plan. A run deploys its variants through
// it, and so does the API tests' harness (deploytest), so that a test
// starts a study's services exactly as a run does, from the study file.
type Lab struct {
	values   map[string]string
	ports    proc.PortAllocator
	acct     resources.Accountant
	tmp      string
	place    *cpuPlan // nil: nothing placed
	progress func(format string, args ...any)
	// deployed counts the deployments of a lab whose deployments may
	// overlap (a test's), each of which is accounted in a scope of its
	// own; nil for a run's, which come one after another.
	deployed *atomic.Int64
	// sources are the other checkouts some variants deploy from, keyed by
	// their value on sourceAxis (Sources); nil for a run of one checkout.
	sources    map[string]source
	sourceAxis string
	// cluster is where the deployments go when not on this machine.
	cluster *clusterLab
}

// LabOptions place a lab opened on its own (not by a run) on disk.
type LabOptions struct {
	Root     string // repository root; build dirs and relative paths start here
	CacheDir string // build cache
	DataDir  string // shared data
	// Name is unique among the labs that run at once; it names the
	// lab's cgroups.
	Name string
	Log  io.Writer // progress: builds, starts
	// WithoutBuilds are builds of the study left unbuilt: a test skips
	// the variants whose toolchain the machine lacks, and one that needs
	// such a build fails to start, its {build.NAME} unknown.
	WithoutBuilds []string
}

// OpenLab builds what study s needs and readies a lab to deploy its
// variants, no process placed on particular cores. Close takes back what
// it made.
func OpenLab(ctx context.Context, s *study.Study, opts LabOptions) (*Lab, error) {
	l := &Lab{
		progress: func(format string, args ...any) { fmt.Fprintf(opts.Log, format+"\n", args...) },
		deployed: &atomic.Int64{},
	}
	err := l.open(s, opts.Name, opts.Root, opts.DataDir)
	if err == nil {
		built := *s
		built.Builds = slices.DeleteFunc(slices.Clone(s.Builds), func(b *study.Build) bool { return slices.Contains(opts.WithoutBuilds, b.Name) })
		_, err = l.build(ctx, &built, opts.CacheDir)
	}
	if err == nil {
		_, err = resolveDatasets(s, opts.DataDir, l.values)
	}
	if err != nil {
		// The failure says why; a failure to clean up after it would hide it.
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

// open takes the lab's share of the machine (an accountant, a temporary
// root) and mints the study's tokens.
func (l *Lab) open(s *study.Study, name, root, dataDir string) error {
	var err error
	if l.acct, err = resources.New(name); err != nil {
		return fmt.Errorf("resource accounting: %w", err)
	}
	if l.tmp, err = newTempRoot(); err != nil {
		return err
	}
	l.values = map[string]string{"root": root, "data": dataDir}
	// A fresh key per lab: no token outlives the processes it was made
	// for, and none is written to a run's files.
	for _, spec := range s.Tokens {
		m, err := tokens.Mint(spec, time.Now())
		if err != nil {
			return err
		}
		for k, v := range m.Values() {
			l.values["tokens."+spec.Name+"."+k] = v
		}
	}
	return nil
}

// build builds the study's builds, or finds them in the cache in
// cacheDir, publishes each as {build.NAME}, and returns their hashes.
func (l *Lab) build(ctx context.Context, s *study.Study, cacheDir string) (map[string]string, error) {
	return l.buildInto(ctx, s, cacheDir, l.values, "")
}

// buildInto builds s's builds from the checkout at values["root"] and
// publishes each in values as {build.NAME}; label prefixes their names in
// the progress shown.
func (l *Lab) buildInto(ctx context.Context, s *study.Study, cacheDir string, values map[string]string, label string) (map[string]string, error) {
	cache := &build.Cache{Root: values["root"], Dir: cacheDir, Vars: values}
	hashes := map[string]string{}
	for _, b := range s.Builds {
		start := time.Now()
		l.progress("build %s%s …", label, b.Name)
		res, err := cache.Build(ctx, build.Spec{Name: b.Name, Dir: b.Dir, Command: b.Command, Ignore: b.Ignore})
		if err != nil {
			return nil, err
		}
		how := "built"
		if res.Cached {
			how = "cached"
		}
		l.progress("build %s%s: %s in %.1fs (%s)", label, b.Name, how, time.Since(start).Seconds(), res.Hash[:12])
		values["build."+b.Name] = res.Dir
		hashes[b.Name] = res.Hash
	}
	return hashes, nil
}

// Values are the placeholders the lab gives every deployment: root,
// data, build.NAME, dataset.NAME, tokens.NAME.KEY.
func (l *Lab) Values() map[string]string { return maps.Clone(l.values) }

// Close removes the lab's cgroups and temporary root, once every
// deployment is stopped.
func (l *Lab) Close() error {
	var err error
	if l.acct != nil {
		err = l.acct.Cleanup()
	}
	// A root that will not go keeps its lease: the next msbench removes it.
	if l.tmp != "" && os.RemoveAll(l.tmp) == nil {
		lease.Release(lease.Dir, l.tmp)
	}
	return err
}

// Deploy starts variant v of s and waits until every service is ready;
// its logs go to logDir. s is the study the lab was opened with, or a copy
// that differs in what its services run (an env value, a command); on
// error nothing it started is left. A variant of another checkout
// (Sources) is deployed from that checkout's study instead.
func (l *Lab) Deploy(ctx context.Context, s *study.Study, v study.Variant, logDir string) (*Deployment, error) {
	return l.deployOn(ctx, s, v, logDir, l.place)
}

// deployOn is Deploy with the services placed by place: the lab's, or
// cores lent for the boot (cpuPlan.lent).
func (l *Lab) deployOn(ctx context.Context, s *study.Study, v study.Variant, logDir string, place *cpuPlan) (*Deployment, error) {
	s, values := l.checkout(s, v)
	scope := ""
	if l.deployed != nil {
		scope = fmt.Sprintf("d%d-", l.deployed.Add(1))
	}
	c := deployConfig{
		study:    s,
		variant:  v,
		values:   values,
		logDir:   logDir,
		ports:    &l.ports,
		acct:     l.acct,
		tmpRoot:  l.tmp,
		progress: l.progress,
		place:    place,
		scope:    scope,
	}
	if l.cluster != nil {
		return l.cluster.deploy(ctx, c)
	}
	return deploy(ctx, c)
}

// newTempRoot makes the lab's private temporary directory, leased so that
// the next msbench removes it if this one dies too hard to.
func newTempRoot() (string, error) {
	dir, err := os.MkdirTemp("", "msbench-run-")
	if err != nil {
		return "", fmt.Errorf("temporary directory: %w", err)
	}
	lease.Take(lease.Dir, dir)
	// Services may run as other users (postgres), who must reach their dirs.
	return dir, os.Chmod(dir, 0o755)
}
