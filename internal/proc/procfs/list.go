package procfs

import (
	"fmt"
	"os"
	"strconv"
)

// All reads the stat of every process in /proc. Processes that exit while
// the directory is being read are skipped, not reported as errors.
func All() ([]Stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	out := make([]Stat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		s, err := ReadStat(pid)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// Alive reports whether pid exists and has not exited. Zombies count as not
// alive: the container init may never reap orphans, so a zombie can linger.
func Alive(pid int) bool {
	s, err := ReadStat(pid)
	return err == nil && !s.Dead()
}

// Descendants returns root and every process below it (zombies included:
// their CPU ticks count until they are reaped) in the parent
// tree of stats, root first. Processes reparented away from the tree (to
// init or a subreaper) are no longer found: that is a limit of /proc.
func Descendants(stats []Stat, root int) []Stat {
	children := make(map[int][]int, len(stats))
	byPID := make(map[int]Stat, len(stats))
	for _, s := range stats {
		byPID[s.PID] = s
		children[s.PPID] = append(children[s.PPID], s.PID)
	}
	rs, ok := byPID[root]
	if !ok {
		return nil
	}
	out := []Stat{rs}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].PID] {
			if c != out[i].PID { // pid 0's parent is itself in some views
				out = append(out, byPID[c])
			}
		}
	}
	return out
}

// Tasks reads the stat of every thread of pid (/proc/PID/task). Threads
// that exit while the directory is being read are skipped.
func Tasks(pid int) ([]Stat, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := make([]Stat, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(dir + "/" + n + "/stat")
		if err != nil {
			continue
		}
		s, err := ParseStat(b)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, n, err)
		}
		out = append(out, s)
	}
	return out, nil
}
