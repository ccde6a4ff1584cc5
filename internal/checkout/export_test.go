package checkout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/checkout/checkouttest"
)

func TestExportRefCopiesTheCommitNotTheWorkingTree(t *testing.T) {
	root := checkouttest.Repo(t, map[string]string{"studies/s/serve.py": "DELAY = 0\n", "run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("studies/s/serve.py", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	checkouttest.Commit(t, root, "exec bit and link")
	// The working tree changes after the commit: the copy must not see it.
	if err := os.WriteFile(filepath.Join(root, "studies/s/serve.py"), []byte("DELAY = 0.003\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "untracked"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := ExportRef(context.Background(), root, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(e.Dir, "studies/s/serve.py")); err != nil || string(got) != "DELAY = 0\n" {
		t.Errorf("serve.py in the copy: %q, %v; want the commit's", got, err)
	}
	if st, err := os.Stat(filepath.Join(e.Dir, "run.sh")); err != nil || st.Mode()&0o100 == 0 {
		t.Errorf("run.sh lost its exec bit: %v, %v", st, err)
	}
	if target, err := os.Readlink(filepath.Join(e.Dir, "link")); err != nil || target != "studies/s/serve.py" {
		t.Errorf("link: %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(e.Dir, "untracked")); !os.IsNotExist(err) {
		t.Errorf("an untracked file was copied: %v", err)
	}
	if len(e.Commit) != 40 || !strings.HasPrefix(e.String(), "HEAD ("+e.Commit[:12]+")") {
		t.Errorf("export %q, commit %q", e, e.Commit)
	}
	if err := e.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the copy outlived Remove: %v", err)
	}
}

func TestExportRefRefusesWhatIsNoCommit(t *testing.T) {
	root := checkouttest.Repo(t, map[string]string{"a": "a"})
	for _, ref := range []string{"no-such-branch", "--output=/tmp/x", "HEAD~5"} {
		if e, err := ExportRef(context.Background(), root, ref); err == nil {
			_ = e.Remove()
			t.Errorf("%q: no error", ref)
		}
	}
	if _, err := ExportRef(context.Background(), t.TempDir(), "HEAD"); err == nil || !strings.Contains(err.Error(), "names no commit") {
		t.Errorf("outside a repository: %v", err)
	}
}
