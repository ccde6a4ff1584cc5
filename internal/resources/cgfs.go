package resources

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// ctlPaths locates one cgroup in each controller's hierarchy. On v2, and on
// v1 with co-mounted controllers, several fields are the same directory.
// cpuset is "" where the machine offers no cpuset controller: it is the
// one controller used only when present.
type ctlPaths struct {
	cpu, cpuacct, memory, cpuset string
}

func (p ctlPaths) join(elem string) ctlPaths {
	out := ctlPaths{
		cpu:     filepath.Join(p.cpu, elem),
		cpuacct: filepath.Join(p.cpuacct, elem),
		memory:  filepath.Join(p.memory, elem),
	}
	if p.cpuset != "" {
		out.cpuset = filepath.Join(p.cpuset, elem)
	}
	return out
}

// dirs lists the distinct directories, each once.
func (p ctlPaths) dirs() []string {
	out := []string{p.cpu}
	for _, d := range []string{p.cpuacct, p.memory, p.cpuset} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err // *PathError names the file
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// readKeyed parses "key value" lines (cpu.stat, cpuacct.stat, memory.stat).
func readKeyed(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			m[f[0]] = v
		}
	}
	return m, nil
}

// mkdirs creates each directory; one that already exists is reused.
func mkdirs(dirs []string) error {
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return nil
}

// rmdirTimeout bounds how long removal retries EBUSY: the kernel reports it
// briefly after the last process exits, while the cgroup is still being
// released.
const rmdirTimeout = 2 * time.Second

// removeDirs removes cgroup directories (cgroupfs allows rmdir although the
// control files are listed). Missing ones are fine. All share one deadline,
// so a cgroup that stays busy costs rmdirTimeout once, not per hierarchy.
func removeDirs(dirs []string) error {
	deadline := time.Now().Add(rmdirTimeout)
	var errs []error
	for _, d := range dirs {
		errs = append(errs, removeDir(d, deadline))
	}
	return errors.Join(errs...)
}

func removeDir(dir string, deadline time.Time) error {
	delay := 5 * time.Millisecond
	for {
		err := syscall.Rmdir(dir)
		switch {
		case err == nil, errors.Is(err, syscall.ENOENT):
			return nil
		case !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline):
			return fmt.Errorf("remove cgroup %s: %w%s", dir, err, describeMembers(dir))
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// describeMembers names what keeps a cgroup busy, for the error message.
func describeMembers(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	return " (still holds pids " + strings.Join(strings.Fields(string(b)), " ") + ")"
}

// moveTree moves pid and its current descendants into each directory.
// Descendants must be moved explicitly: only processes forked after the
// move inherit the cgroup. A child forked after its parent was listed but
// before the parent moved would stay behind, so the tree is listed again
// until a pass finds nothing new.
func moveTree(dirs []string, pid int) error {
	moved := map[int]bool{}
	for pass := 0; pass < 10; pass++ {
		pids := []int{pid}
		if stats, err := procfs.All(); err == nil {
			pids = pids[:0]
			for _, s := range procfs.Descendants(stats, pid) {
				if !s.Dead() && !moved[s.PID] {
					pids = append(pids, s.PID)
				}
			}
		} else if pass > 0 {
			return nil
		}
		if len(pids) == 0 {
			if pass == 0 {
				return fmt.Errorf("pid %d: %w", pid, os.ErrProcessDone)
			}
			return nil
		}
		for _, d := range dirs {
			for _, p := range pids {
				err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(p))
				// A descendant may exit meanwhile; the tracked pid may not.
				if err != nil && (p == pid || !errors.Is(err, syscall.ESRCH)) {
					return err
				}
			}
		}
		for _, p := range pids {
			moved[p] = true
		}
	}
	return nil
}
