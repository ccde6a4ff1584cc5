package links

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper sleeps on a timerfd: Go's own timers wake through epoll_wait,
// whose timeout has millisecond resolution, so that a delay of 5 ms would
// come out anywhere up to 6 ms; the kernel's high-resolution timers fire
// the timerfd within microseconds, through the same netpoller, without
// spinning a core.
type sleeper struct {
	f   *os.File // nil: fall back to Go's timers
	fd  int      // f's descriptor; f.Fd() would make f blocking
	buf [8]byte
}

func newSleeper() *sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &sleeper{}
	}
	return &sleeper{f: os.NewFile(uintptr(fd), "msbench-link-timer"), fd: fd}
}

func (s *sleeper) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if s.f != nil {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
		if unix.TimerfdSettime(s.fd, 0, &spec, nil) == nil {
			if _, err := s.f.Read(s.buf[:]); err == nil {
				return
			}
		}
		s.close()
	}
	time.Sleep(d)
}

func (s *sleeper) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
