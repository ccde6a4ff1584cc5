package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc/proctest"
)

// TestV2OnBareUnifiedHierarchy exercises the v2 code against a real cgroup2
// mount even where it offers no cpu/memory controller (hybrid machines):
// cpu.stat exists in every v2 cgroup, so moving, CPU reading and removal can
// be checked for real. Where v2 is fully usable the method tests cover it.
func TestV2OnBareUnifiedHierarchy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root")
	}
	d, err := Detect()
	if err != nil {
		t.Fatal(err)
	}
	if d.V2Root == "" {
		t.Skip("no cgroup2 mount")
	}
	dir := filepath.Join(d.V2Root, fmt.Sprintf("msbench-test%d-bare", os.Getpid()))
	svc := ctlPaths{cpu: dir, cpuacct: dir, memory: dir}
	if err := mkdirs(svc.dirs()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeDirs(svc.dirs()); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind", dir)
		}
	})
	p := proctest.StartHelper(t, "burner", "burn")
	if err := moveTree(svc.dirs(), p.Pid()); err != nil {
		t.Fatal(err)
	}
	// Read after the move, however long a busy machine makes it take:
	// what burns from here on is all the cgroup's.
	before := treeCPU(t, p.Pid())
	burnt := waitForCPU(t, p.Pid(), before, 0.2)
	user, sys, err := v2Ops{}.readCPU(svc)
	if err != nil {
		t.Fatal(err)
	}
	if user+sys < burnt-0.05 {
		t.Errorf("v2 cpu.stat shows %.2fs; the burner burnt %.2fs since the move", user+sys, burnt)
	}
	if err := p.Stop(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
}
