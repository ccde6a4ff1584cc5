package deps

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"golang.org/x/sys/unix"
)

// A PostgreSQL server that did not shut down cleanly (killed for fault
// injection, stopped by force after the grace, or an initdb cut short)
// leaves a System V shared memory segment behind, outside the private dir.
// A new server on the same data takes it over only once no process is
// attached, and processes killed a moment ago may still be (they detach
// asynchronously); and once the data dir is removed nothing would ever free
// it. So such segments are waited for before a restart and freed on Stop.

// shmSettleTimeout bounds the wait for dead processes to detach.
const shmSettleTimeout = 5 * time.Second

// The start of PostgreSQL's PGShmemHeader on 64-bit Linux: a magic number,
// and at offsets 40 and 48 the device and inode of the data dir.
const (
	pgShmemMagic      = 679834894
	pgShmemHeaderSize = 56
	// PostgreSQL keys a cluster's segment with its data dir's inode, plus
	// one for every key found taken; more than a few never happens.
	pgShmemKeyRange = 16
)

// settle waits until no process is attached to a segment of the cluster,
// so that the next server may take it over.
func (s *postgres) settle(ctx context.Context, _ *env) error {
	ctx, cancel := context.WithTimeout(ctx, shmSettleTimeout)
	defer cancel()
	for _, seg := range s.segments() {
		for attached(seg.id) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("shared memory segment %d of the previous postgres is still attached: %w", seg.id, ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// release frees the cluster's segments once its processes are gone and
// before the data dir, which identifies them, is removed.
func (s *postgres) release(e *env) error {
	if err := s.settle(context.Background(), e); err != nil {
		return err
	}
	for _, seg := range s.segments() {
		if _, err := unix.SysvShmCtl(seg.id, unix.IPC_RMID, nil); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
			return fmt.Errorf("free shared memory segment %d: %w", seg.id, err)
		}
	}
	// A clean shutdown removes its segment itself, so every segment leased
	// since the first start is given back, whether freed here or not.
	for _, seg := range s.leased {
		lease.Release(lease.SharedMemory, seg.String())
	}
	s.leased = nil
	return nil
}

func (s *postgres) lease(*env) {
	for _, seg := range s.segments() {
		lease.Take(lease.SharedMemory, seg.String())
		s.leased = append(s.leased, seg)
	}
}

// segment is a System V shared memory segment: its id, and the key that
// tells it from a later one with the same id.
type segment struct{ id, key int }

func (g segment) String() string { return strconv.Itoa(g.id) + ":" + strconv.Itoa(g.key) }

// segments lists the System V shared memory segments of the cluster in
// s.data: those keyed near its inode whose header names its device and
// inode.
func (s *postgres) segments() []segment {
	var st syscall.Stat_t
	if s.data == "" || syscall.Stat(s.data, &st) != nil {
		return nil
	}
	table, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		return nil
	}
	var segs []segment
	for _, line := range strings.Split(string(table), "\n")[1:] {
		// key shmid perms size ...
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		key, err1 := strconv.ParseInt(f[0], 10, 64)
		id, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || uint32(key)-uint32(st.Ino) >= pgShmemKeyRange {
			continue
		}
		if ownedBy(id, st.Dev, st.Ino) {
			segs = append(segs, segment{id, int(key)})
		}
	}
	return segs
}

// ownedBy reads the PostgreSQL header of segment id, if it has one, and
// reports whether it names the data dir with device dev and inode ino.
func ownedBy(id int, dev, ino uint64) bool {
	mem, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		return false
	}
	defer unix.SysvShmDetach(mem)
	return len(mem) >= pgShmemHeaderSize &&
		binary.NativeEndian.Uint32(mem[0:]) == pgShmemMagic &&
		binary.NativeEndian.Uint64(mem[40:]) == dev &&
		binary.NativeEndian.Uint64(mem[48:]) == ino
}

// attached reports whether segment id exists with a process attached.
func attached(id int) bool {
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil {
		return false
	}
	return desc.Nattch > 0
}
