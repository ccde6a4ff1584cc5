// Package checkouttest makes git repositories for tests of what reads a
// checkout's history (msbench ab's copies of a ref).
package checkouttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Repo makes a git repository in a temporary directory holding files
// (path → text) in one commit, and returns its root.
func Repo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, root, "init", "-q")
	Commit(t, root, "first")
	return root
}

// Commit commits everything in the working tree of root.
func Commit(t testing.TB, root, message string) {
	t.Helper()
	Git(t, root, "add", "-A")
	Git(t, root, "-c", "user.name=msbench", "-c", "user.email=msbench@example.invalid", "commit", "-q", "-m", message)
}

// Git runs git in root and fails the test if it fails.
func Git(t testing.TB, root string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
