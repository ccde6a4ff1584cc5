package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// machineFile names the state directory of the cluster this machine runs.
// One cluster at a time: the kubelet's kubepods cgroups and containerd's
// /run/containerd belong to the machine, not to a cluster. It is in /run,
// so a reboot, which ends every cluster, forgets it too.
var machineFile = "/run/msbench-cluster"

// ErrBusy says another cluster runs on this machine.
var ErrBusy = errors.New("another cluster runs on this machine")

// claimMachine records that the cluster in dir is the machine's, waiting
// up to wait for another one to go. A claim whose cluster is gone (no
// state, or an Up that died, which is then taken down) is taken over.
func claimMachine(ctx context.Context, dir string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := withMachineFile(func(f *os.File, holder string) error {
			if holder != "" && holder != dir && !machineFree(ctx, holder) {
				return fmt.Errorf("%w (its state is in %s: msbench cluster down --state-dir %s stops it)", ErrBusy, holder, holder)
			}
			if err := f.Truncate(0); err != nil {
				return err
			}
			_, err := f.WriteAt([]byte(dir+"\n"), 0)
			return err
		})
		if !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the machine: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// machineFree reports whether the cluster holding the machine is gone,
// taking down what a dead Up of it left.
func machineFree(ctx context.Context, holder string) bool {
	l, err := stateLayout(holder)
	if err != nil {
		return false
	}
	st, err := readState(l)
	if noState(err) {
		return true
	}
	if err != nil || st.Ready || st.Owner.alive() {
		return false
	}
	return takeDown(ctx, l) == nil
}

// releaseMachine ends the claim of the cluster in dir, if it holds one
// (an empty file is no one's claim, and goes too).
func releaseMachine(dir string) error {
	return withMachineFile(func(f *os.File, holder string) error {
		if holder != dir && holder != "" {
			return nil
		}
		return os.Remove(machineFile)
	})
}

// withMachineFile runs f with the machine file open and locked, and the
// name it holds. A file unlinked by a release while this waited for its
// lock is a claim no longer: it is opened again.
func withMachineFile(f func(file *os.File, holder string) error) error {
	for {
		file, err := os.OpenFile(machineFile, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("machine's cluster claim: %w", err)
		}
		if err := unix.Flock(int(file.Fd()), unix.LOCK_EX); err != nil {
			file.Close()
			return fmt.Errorf("lock %s: %w", machineFile, err)
		}
		var opened, named unix.Stat_t
		if unix.Fstat(int(file.Fd()), &opened) != nil || unix.Stat(machineFile, &named) != nil || opened.Ino != named.Ino {
			file.Close()
			continue
		}
		data, err := os.ReadFile(machineFile)
		if err == nil {
			err = f(file, strings.TrimSpace(string(data)))
		}
		if !errors.Is(err, ErrBusy) && err != nil {
			err = fmt.Errorf("machine's cluster claim: %w", err)
		}
		file.Close() // and with it the lock
		return err
	}
}
