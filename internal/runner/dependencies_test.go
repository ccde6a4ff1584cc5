package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/study"
)

// A deployment's dependencies start together: one that fails to start
// leaves those that did to be stopped with the deployment, and the error
// names it.
func TestAFailedDependencyLeavesTheOthersToStop(t *testing.T) {
	s := &study.Study{Deps: []*study.Dependency{{Name: "cache", Kind: "redis"}, {Name: "store", Kind: "nosuch"}}}
	d := &Deployment{cfg: deployConfig{study: s, logDir: t.TempDir(), ports: &proc.PortAllocator{}, progress: t.Logf}}
	d.cfg.values = map[string]string{"root": "../.."}
	// The deployment's own directory, which the servers' users may enter.
	if err := d.makeWorkDir(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.removeWorkDir() })
	err := d.startDeps(context.Background(), map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "dependency store") {
		t.Fatalf("err = %v, want the store's", err)
	}
	if len(d.deps) != 1 || d.deps[0].Name != "cache" {
		t.Fatalf("kept %v, want the cache that started (%v)", d.deps, err)
	}
	if _, children := snapshot(); !hasComm(children, "redis-server") {
		t.Fatal("no redis-server running before the stop")
	}
	if err := d.stopDeps(); err != nil {
		t.Fatal(err)
	}
	if _, children := snapshot(); hasComm(children, "redis-server") {
		t.Fatal("redis-server still running after the stop")
	}
}

func hasComm(children map[int]placedProcess, comm string) bool {
	for _, p := range children {
		if p.comm == comm {
			return true
		}
	}
	return false
}
