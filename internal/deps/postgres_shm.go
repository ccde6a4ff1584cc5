package deps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A PostgreSQL server that did not shut down cleanly (killed for fault
// injection, or after the stop grace) leaves its System V shared memory
// segment behind, outside the private dir, named in postmaster.pid. A new
// server on the same data reuses it only once no process is attached, and
// processes killed a moment ago may still be (they are reaped, and detached,
// asynchronously); and when the data dir is removed nothing would ever free
// it. So the segment is waited for before a restart and freed on Stop.

// shmSettleTimeout bounds the wait for dead processes to detach.
const shmSettleTimeout = 5 * time.Second

// settle waits until the segment of a killed predecessor, if any, has no
// process attached, so that the next server may take it over.
func (s *postgres) settle(ctx context.Context, _ *env) error {
	id, ok := s.leftSegment()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, shmSettleTimeout)
	defer cancel()
	for attached(id) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("shared memory segment %d of the previous postgres is still attached: %w", id, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// release frees the segment a killed server left, once the processes are
// gone and before the data dir, which names it, is removed.
func (s *postgres) release(e *env) error {
	id, ok := s.leftSegment()
	if !ok {
		return nil
	}
	if err := s.settle(context.Background(), e); err != nil {
		return err
	}
	if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
		return fmt.Errorf("free shared memory segment %d: %w", id, err)
	}
	return nil
}

// leftSegment returns the segment named in postmaster.pid, which a clean
// shutdown removes, if it still exists and was created by the postmaster
// named there (so that an id reused since is never touched). The file's
// first line is the postmaster's pid, its seventh "KEY ID".
func (s *postgres) leftSegment() (int, bool) {
	if s.data == "" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(lines[6])
	if len(fields) != 2 {
		return 0, false
	}
	id, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, false
	}
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil || int(desc.Cpid) != pid {
		return 0, false
	}
	return id, true
}

// attached reports whether segment id exists with a process attached.
func attached(id int) bool {
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil {
		return false
	}
	return desc.Nattch > 0
}
