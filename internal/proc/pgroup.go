package proc

import (
	"errors"
	"syscall"

	"github.com/msbench/msbench/internal/proc/procfs"
)

// groupAlive reports whether process group pgid has a member that has not
// exited. kill(-pgid, 0) alone is not enough: orphans are reparented to init,
// and an init that never reaps (common in containers) leaves zombies that
// still count as members.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stats, err := procfs.All()
	if err != nil {
		return true // cannot tell; keep waiting rather than leak
	}
	for _, s := range stats {
		if s.PGRP == pgid && !s.Dead() {
			return true
		}
	}
	return false
}

// groupStopped reports whether every thread of every live member of
// process group pgid is stopped (or traced, or has exited).
func groupStopped(pgid int) bool {
	stats, err := procfs.All()
	if err != nil {
		return false
	}
	for _, s := range stats {
		if s.PGRP != pgid || s.Dead() {
			continue
		}
		tasks, err := procfs.Tasks(s.PID)
		if err != nil {
			if procfs.Alive(s.PID) {
				return false
			}
			continue // it exited while we looked: nothing left to stop
		}
		for _, t := range tasks {
			if t.State != 'T' && t.State != 't' && !t.Dead() {
				return false
			}
		}
	}
	return true
}
