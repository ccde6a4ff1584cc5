package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildIsCachedUntilASourceChanges(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "svc")
	if err := os.MkdirAll(filepath.Join(src, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.txt", "v1")
	write("node_modules/dep.txt", "x")
	c := &Cache{Root: root, Dir: filepath.Join(root, ".cache")}
	b := Spec{Name: "svc", Dir: "svc", Command: "cp main.txt {out}/artifact && echo built"}

	first, err := c.Build(context.Background(), b)
	if err != nil || first.Cached {
		t.Fatalf("first build: %+v %v", first, err)
	}
	if got, _ := os.ReadFile(filepath.Join(first.Dir, "artifact")); string(got) != "v1" {
		t.Fatalf("artifact %q", got)
	}
	again, err := c.Build(context.Background(), b)
	if err != nil || !again.Cached || again.Dir != first.Dir {
		t.Fatalf("second build: %+v %v", again, err)
	}
	write("node_modules/dep.txt", "changed, but not a source")
	if r, _ := c.Build(context.Background(), b); !r.Cached {
		t.Fatal("a change under node_modules caused a rebuild")
	}
	write("main.txt", "v2")
	changed, err := c.Build(context.Background(), b)
	if err != nil || changed.Cached || changed.Dir == first.Dir {
		t.Fatalf("after a change: %+v %v", changed, err)
	}
}

func TestBuildFailureShowsTheLog(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Cache{Root: root, Dir: filepath.Join(root, ".cache")}
	_, err := c.Build(context.Background(), Spec{Name: "svc", Dir: "svc", Command: "echo compiler says no >&2; exit 3"})
	if err == nil || !strings.Contains(err.Error(), "compiler says no") {
		t.Fatalf("error %v should carry the build log", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, ".cache", ".tmp-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary build dirs left: %v", leftovers)
	}
}
