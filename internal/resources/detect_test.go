package resources

import (
	"reflect"
	"strings"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const pureV2Mountinfo = `25 30 0:23 / /sys rw,nosuid shared:7 - sysfs sysfs rw
26 25 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`

const comountedMountinfo = `30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:10 - cgroup cgroup rw,cpu,cpuacct
31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid shared:11 - cgroup cgroup rw,memory
32 25 0:27 / /mnt/my\040memory rw - cgroup cgroup rw,memory
`

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		v1     map[string]string
		v2Root string
	}{
		{"hybrid", hybridMountinfo, map[string]string{
			"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "memory": "/sys/fs/cgroup/memory",
		}, "/sys/fs/cgroup/unified"},
		{"pure v2", pureV2Mountinfo, map[string]string{}, "/sys/fs/cgroup"},
		{"co-mounted v1, bind mount ignored", comountedMountinfo, map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory",
		}, ""},
		{"no cgroups", "22 1 0:5 / /proc rw - proc proc rw\n", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parseMountinfo(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.V1, tt.v1) || d.V2Root != tt.v2Root {
				t.Errorf("got v1 %v v2 %q, want %v %q", d.V1, d.V2Root, tt.v1, tt.v2Root)
			}
		})
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/my\040memory`); got != "/mnt/my memory" {
		t.Errorf("got %q", got)
	}
}

func TestDetectionChoosesMethod(t *testing.T) {
	v1 := map[string]string{"cpu": "/c", "cpuacct": "/a", "memory": "/m"}
	tests := []struct {
		name         string
		d            Detection
		v2OK, v1OK   bool
		errSubstring string // of the v2 error
	}{
		{"hybrid with empty v2", Detection{V1: v1, V2Root: "/u"}, false, true, "lacks controllers cpu, memory"},
		{"pure v2", Detection{V1: map[string]string{}, V2Root: "/sys/fs/cgroup", V2Controllers: []string{"cpuset", "cpu", "io", "memory", "pids"}}, true, false, ""},
		{"v2 without memory", Detection{V2Root: "/r", V2Controllers: []string{"cpu"}}, false, false, "lacks controllers memory"},
		{"memory disabled on boot", Detection{V1: v1, Disabled: []string{"memory"}}, false, false, "no cgroup2 mount"},
		{"nothing", Detection{}, false, false, "no cgroup2 mount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err2 := tt.d.v2Roots()
			_, err1 := tt.d.v1Roots()
			if (err2 == nil) != tt.v2OK || (err1 == nil) != tt.v1OK {
				t.Fatalf("v2 err %v, v1 err %v; want v2 ok %v, v1 ok %v", err2, err1, tt.v2OK, tt.v1OK)
			}
			if err2 != nil && !strings.Contains(err2.Error(), tt.errSubstring) {
				t.Errorf("v2 error %q does not mention %q", err2, tt.errSubstring)
			}
		})
	}
}

func TestParseDisabled(t *testing.T) {
	in := "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t39\t0\n"
	got, err := parseDisabled(strings.NewReader(in))
	if err != nil || !reflect.DeepEqual(got, []string{"memory"}) {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestDetectThisMachine(t *testing.T) {
	d, err := Detect()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cgroups: %s", d)
	for _, m := range allMethods {
		why := unavailable(m)
		if why == "" {
			why = "available"
		}
		t.Logf("%s: %s", m, why)
	}
}
