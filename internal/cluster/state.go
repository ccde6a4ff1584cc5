package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// state is what a cluster's state file records: everything Down needs to
// take the machine back to how Up found it, written before each thing is
// taken, so that a cluster whose Up was killed half-way is taken down too.
type state struct {
	// Owner is the process running Up until the cluster is ready; zero
	// once it is. An owner that is gone with the cluster not ready means
	// Up died half-way.
	Owner   process `json:"owner"`
	Ready   bool    `json:"ready"`
	Netns   string  `json:"netns"`
	APIPort int     `json:"api_port"`
	// Processes are the daemons Up started, in start order.
	Processes []process `json:"processes"`
	// Sysctls are the values the kubelet rewrites, as they were before.
	Sysctls map[string]string `json:"sysctls"`
	// Created are system paths that did not exist before Up, which the
	// components create whatever they are told (e.g. /run/containerd).
	Created []string `json:"created"`
	// NetnsMounted says whether /run/netns was a mount point before Up
	// ("ip netns add" makes it one).
	NetnsMounted bool `json:"netns_mounted"`
	// Cgroups are the kubelet's top cgroups (kubepods), one per
	// hierarchy; Up refuses to start where they exist.
	Cgroups []string `json:"cgroups"`
}

// process is a process told apart from a later one reusing its pid by its
// start time.
type process struct {
	Name  string `json:"name,omitempty"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

func self() process {
	p := process{PID: os.Getpid()}
	if st, err := procfs.ReadStat(p.PID); err == nil {
		p.Start = st.StartTime
	}
	return p
}

// alive reports whether p still runs (and is not a zombie).
func (p process) alive() bool {
	if p.PID <= 0 {
		return false
	}
	st, err := procfs.ReadStat(p.PID)
	return err == nil && st.StartTime == p.Start && !st.Dead()
}

func readState(l layout) (state, error) {
	var s state
	data, err := os.ReadFile(l.stateFile())
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("cluster state %s: %w", l.stateFile(), err)
	}
	return s, nil
}

func writeState(l layout, s state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	tmp := l.stateFile() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	if err := os.Rename(tmp, l.stateFile()); err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	return nil
}

// noState reports whether err says there is no state file.
func noState(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// kubeletSysctls are the global settings the kubelet sets to its liking
// (protectKernelDefaults off; the last three only where they differ from
// its values), restored by Down.
var kubeletSysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops",
	"vm/panic_on_oom", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}

func readSysctls() (map[string]string, error) {
	m := map[string]string{}
	for _, k := range kubeletSysctls {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			return nil, fmt.Errorf("read sysctl %s: %w", k, err)
		}
		m[k] = strings.TrimSpace(string(b))
	}
	return m, nil
}

func writeSysctls(m map[string]string) error {
	var errs []error
	for k, v := range m {
		if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
		}
	}
	return errors.Join(errs...)
}
