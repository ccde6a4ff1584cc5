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
