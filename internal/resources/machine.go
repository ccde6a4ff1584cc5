package resources

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// MachineCPU is the CPU time of the whole machine by kind, summed over its
// cores, in seconds: the first line of /proc/stat. Its values only mean
// something as the difference of two readings (Sub).
type MachineCPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
	// Cores is the number of cpuN lines.
	Cores int
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	return ParseProcStat(b)
}

// ParseProcStat reads the "cpu" line of /proc/stat ("cpu user nice system
// idle iowait irq softirq steal guest guest_nice", in USER_HZ ticks; guest
// time is already counted in user) and counts the cpuN lines. Kernels
// before 2.6.11 lack steal, which then reads 0.
func ParseProcStat(b []byte) (MachineCPU, error) {
	var m MachineCPU
	found := false
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			m.Cores++
			continue
		}
		if len(f) < 5 {
			return MachineCPU{}, fmt.Errorf("/proc/stat: short cpu line %q", line)
		}
		cols := []*float64{&m.User, &m.Nice, &m.System, &m.Idle, &m.IOWait, &m.IRQ, &m.SoftIRQ, &m.Steal}
		for i, p := range cols {
			if i+1 >= len(f) {
				break
			}
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return MachineCPU{}, fmt.Errorf("/proc/stat: cpu column %d: %w", i+1, err)
			}
			*p = float64(v) / procfs.ClockTicks
		}
		found = true
	}
	if !found {
		return MachineCPU{}, fmt.Errorf("/proc/stat: no cpu line")
	}
	return m, nil
}

// Sub is the CPU time from an earlier reading o to m.
func (m MachineCPU) Sub(o MachineCPU) MachineCPU {
	return MachineCPU{
		User: m.User - o.User, Nice: m.Nice - o.Nice, System: m.System - o.System,
		Idle: m.Idle - o.Idle, IOWait: m.IOWait - o.IOWait, IRQ: m.IRQ - o.IRQ,
		SoftIRQ: m.SoftIRQ - o.SoftIRQ, Steal: m.Steal - o.Steal, Cores: m.Cores,
	}
}

// Add is the sum of two differences: the machine over two windows.
func (m MachineCPU) Add(o MachineCPU) MachineCPU {
	return MachineCPU{
		User: m.User + o.User, Nice: m.Nice + o.Nice, System: m.System + o.System,
		Idle: m.Idle + o.Idle, IOWait: m.IOWait + o.IOWait, IRQ: m.IRQ + o.IRQ,
		SoftIRQ: m.SoftIRQ + o.SoftIRQ, Steal: m.Steal + o.Steal, Cores: max(m.Cores, o.Cores),
	}
}

// Total is every core's time, idle and stolen included: the wall time
// times the cores.
func (m MachineCPU) Total() float64 {
	return m.User + m.Nice + m.System + m.Idle + m.IOWait + m.IRQ + m.SoftIRQ + m.Steal
}

// Slack is how far a difference of two readings may be off: the kernel
// moves each core's counters in whole ticks (1/USER_HZ), so each end of a
// window may be a tick off on every core. Over a short step that is a
// large share: 40 ms of a 100 ms window on 2 cores.
func (m MachineCPU) Slack() float64 { return 2 * float64(m.Cores) / procfs.ClockTicks }

// Busy is the CPU time the machine spent on anything (processes and
// interrupts) over a window of wall seconds: the wall time times the cores
// less idle, I/O wait and steal. The kernel counts idle time exactly (from
// the clock, on a tickless kernel) but busy time in sampled ticks, which
// miss much of a bursty process such as a load generator; so busy time is
// what idle time leaves. With wall 0 it falls back to the sampled sum.
func (m MachineCPU) Busy(wall float64) float64 {
	if wall <= 0 {
		return m.User + m.Nice + m.System + m.IRQ + m.SoftIRQ
	}
	return max(0, wall*float64(m.Cores)-m.Idle-m.IOWait-m.Steal)
}

// Capacity is the CPU time the machine had over a window of wall seconds:
// wall times the cores (the sum of every column with wall 0).
func (m MachineCPU) Capacity(wall float64) float64 {
	if wall <= 0 {
		return m.Total()
	}
	return wall * float64(m.Cores)
}
