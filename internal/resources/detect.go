package resources

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Detection is the cgroup layout of this machine, as seen by this process.
type Detection struct {
	V1            map[string]string // v1 controller name -> its mount point
	V2Root        string            // cgroup2 mount point; "" if not mounted
	V2Controllers []string          // from V2Root/cgroup.controllers
	Disabled      []string          // controllers the kernel disabled (/proc/cgroups)
}

// Detect reads /proc/self/mountinfo, /proc/cgroups and the v2 root's
// cgroup.controllers.
func Detect() (Detection, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return Detection{}, fmt.Errorf("detect cgroups: %w", err)
	}
	defer f.Close()
	d, err := parseMountinfo(f)
	if err != nil {
		return Detection{}, fmt.Errorf("detect cgroups: %w", err)
	}
	if pc, err := os.Open("/proc/cgroups"); err == nil {
		d.Disabled, err = parseDisabled(pc)
		pc.Close()
		if err != nil {
			return Detection{}, fmt.Errorf("detect cgroups: %w", err)
		}
	}
	if d.V2Root != "" {
		b, err := os.ReadFile(filepath.Join(d.V2Root, "cgroup.controllers"))
		if err != nil {
			return Detection{}, fmt.Errorf("detect cgroups: %w", err)
		}
		d.V2Controllers = strings.Fields(string(b))
	}
	return d, nil
}

// parseMountinfo finds cgroup mounts. The first mount of each controller
// wins, as later ones are usually bind mounts of the same hierarchy.
func parseMountinfo(r io.Reader) (Detection, error) {
	d := Detection{V1: map[string]string{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		mountpoint := unescapeMount(f[4])
		switch f[sep+1] {
		case "cgroup2":
			if d.V2Root == "" {
				d.V2Root = mountpoint
			}
		case "cgroup":
			for _, opt := range strings.Split(f[sep+3], ",") {
				if isV1Controller(opt) {
					if _, seen := d.V1[opt]; !seen {
						d.V1[opt] = mountpoint
					}
				}
			}
		}
	}
	return d, sc.Err()
}

// isV1Controller filters the super options of a v1 mount down to the
// controllers this package uses.
func isV1Controller(opt string) bool {
	return opt == "cpu" || opt == "cpuacct" || opt == "memory" || opt == "cpuset"
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseDisabled reads /proc/cgroups: "subsys_name hierarchy num_cgroups
// enabled".
func parseDisabled(r io.Reader) ([]string, error) {
	var off []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && !strings.HasPrefix(f[0], "#") && f[3] == "0" {
			off = append(off, f[0])
		}
	}
	return off, sc.Err()
}

// v2Roots says where cgroup-v2 accounting would live, or why it cannot.
func (d Detection) v2Roots() (ctlPaths, error) {
	if d.V2Root == "" {
		return ctlPaths{}, errors.New("no cgroup2 mount")
	}
	if missing := d.missing(d.V2Controllers, "cpu", "memory"); len(missing) > 0 {
		return ctlPaths{}, fmt.Errorf("cgroup2 at %s lacks controllers %s (has %q)",
			d.V2Root, strings.Join(missing, ", "), strings.Join(d.V2Controllers, " "))
	}
	p := ctlPaths{cpu: d.V2Root, cpuacct: d.V2Root, memory: d.V2Root}
	if len(d.missing(d.V2Controllers, "cpuset")) == 0 {
		p.cpuset = d.V2Root
	}
	return p, nil
}

// v1Roots says where cgroup-v1 accounting would live, or why it cannot.
func (d Detection) v1Roots() (ctlPaths, error) {
	mounted := make([]string, 0, len(d.V1))
	for c := range d.V1 {
		mounted = append(mounted, c)
	}
	if missing := d.missing(mounted, "cpu", "cpuacct", "memory"); len(missing) > 0 {
		return ctlPaths{}, fmt.Errorf("cgroup v1 lacks controllers %s", strings.Join(missing, ", "))
	}
	p := ctlPaths{cpu: d.V1["cpu"], cpuacct: d.V1["cpuacct"], memory: d.V1["memory"]}
	if len(d.missing(mounted, "cpuset")) == 0 {
		p.cpuset = d.V1["cpuset"]
	}
	return p, nil
}

// missing lists the wanted controllers that are not in have or disabled.
func (d Detection) missing(have []string, want ...string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) || slices.Contains(d.Disabled, w) {
			out = append(out, w)
		}
	}
	return out
}

// String summarises the layout for logs and provenance.
func (d Detection) String() string {
	var parts []string
	for _, c := range []string{"cpu", "cpuacct", "memory", "cpuset"} {
		if mp, ok := d.V1[c]; ok {
			parts = append(parts, fmt.Sprintf("v1 %s at %s", c, mp))
		}
	}
	if d.V2Root != "" {
		parts = append(parts, fmt.Sprintf("v2 at %s with [%s]", d.V2Root, strings.Join(d.V2Controllers, " ")))
	}
	if len(d.Disabled) > 0 {
		parts = append(parts, "disabled: "+strings.Join(d.Disabled, " "))
	}
	if len(parts) == 0 {
		return "no cgroups"
	}
	return strings.Join(parts, "; ")
}
