// Package procfs reads the few /proc fields msbench needs: process state,
// parentage, process group, CPU ticks and resident memory. It exists so that
// process supervision and resource accounting parse /proc/PID/stat the same
// way.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ClockTicks is USER_HZ, the unit of the CPU fields in /proc/PID/stat. It is
// 100 on every Linux architecture Go supports; reading it via sysconf would
// need cgo for no practical gain.
const ClockTicks = 100

// Stat is the subset of /proc/PID/stat that msbench uses.
type Stat struct {
	PID       int
	Comm      string
	State     byte // R, S, D, Z, T, t, X, ...
	PPID      int
	PGRP      int
	UTime     uint64 // clock ticks
	STime     uint64
	CUTime    uint64 // ticks of children that were waited for
	CSTime    uint64
	StartTime uint64 // ticks after boot; with PID identifies a process uniquely
	RSSPages  int64  // same counter as VmRSS in /proc/PID/status, in pages
}

// Dead reports whether the process has exited (a zombie is dead: it only
// waits for its parent to collect the exit status).
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return s, nil
}

// ParseStat parses the content of a /proc/PID/stat file.
func ParseStat(b []byte) (Stat, error) {
	// comm may contain spaces and parentheses, so split around the last ')'.
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Stat{}, errors.New("malformed stat: no comm")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat pid: %w", err)
	}
	f := bytes.Fields(b[closing+1:])
	// f[0] is field 3 (state) of proc(5); rss is field 24.
	const need = 22
	if len(f) < need {
		return Stat{}, fmt.Errorf("malformed stat: %d fields after comm", len(f))
	}
	s := Stat{PID: pid, Comm: string(b[open+1 : closing])}
	if len(f[0]) > 0 {
		s.State = f[0][0]
	}
	var perr error
	num := func(i int) int64 {
		v, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil && perr == nil {
			perr = fmt.Errorf("malformed stat field %d: %w", i+3, err)
		}
		return v
	}
	s.PPID = int(num(1))
	s.PGRP = int(num(2))
	s.UTime = uint64(num(11))
	s.STime = uint64(num(12))
	s.CUTime = uint64(num(13))
	s.CSTime = uint64(num(14))
	s.StartTime = uint64(num(19))
	s.RSSPages = num(21)
	return s, perr
}
