package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Swept is what a sweep did with the leases of msbench processes that
// died without deleting their namespaces.
type Swept struct {
	// Deleted are the namespaces deleted, as "NAMESPACE on TARGET".
	Deleted []string
	// Gone are leases whose namespace (or whose cluster's kubeconfig) no
	// longer exists: dropped, nothing to do.
	Gone []string
	// Left are the namespaces not deleted: not the ones the lease's holder
	// created (left alone for good, and their leases dropped), or that
	// could not be deleted now (their leases stay for the next sweep).
	Left []error
	// Runs are the namespaces of the dead holders that are gone now
	// (deleted or already gone), whose leftovers outside the cluster's
	// API (images imported into a local cluster) may go too.
	Runs []Run
}

// Run is a run's namespace on its cluster.
type Run struct {
	Namespace string
	Target    Target
}

// Empty reports whether the sweep has nothing to tell: it deleted no
// namespace and left none. Leases whose namespaces were already gone are
// housekeeping, not news: a run whose namespace took a while to go, or
// a cluster taken down since, says nothing about what msbench left.
func (s Swept) Empty() bool { return len(s.Deleted) == 0 && len(s.Left) == 0 }

func (s Swept) String() string {
	msg := fmt.Sprintf("deleted %d Kubernetes namespace(s) of msbench processes that died without doing so %v", len(s.Deleted), s.Deleted)
	if len(s.Left) > 0 {
		msg += fmt.Sprintf("; left: %v", errors.Join(s.Left...))
	}
	return msg
}

// Sweep deletes the namespaces that dead msbench processes created and
// did not delete, as their leases say; msbench calls it when it starts,
// beside lease.Sweep. A namespace is deleted only if its labels say the
// lease's holder created it; a live holder's namespaces are left alone.
func Sweep(ctx context.Context) Swept { return sweep(ctx, leaseDir) }

func sweep(ctx context.Context, dir string) Swept {
	var s Swept
	files, _ := filepath.Glob(filepath.Join(dir, leasePrefix+"*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its holder deleted its namespace since the listing
		}
		var l lease
		if err == nil {
			err = json.Unmarshal(data, &l)
		}
		if err != nil || l.PID <= 0 || l.Namespace == "" {
			s.Left = append(s.Left, fmt.Errorf("lease %s is not one msbench wrote (%v); remove it by hand", file, err))
			continue
		}
		if l.PID == os.Getpid() || l.Alive() {
			continue
		}
		if done := s.reclaim(ctx, l); done {
			if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.Left = append(s.Left, fmt.Errorf("lease %s: %w", file, err))
			}
		}
	}
	return s
}

// reclaim deletes the lease's namespace if it is the one the holder
// created, and reports whether the lease is done with.
func (s *Swept) reclaim(ctx context.Context, l lease) bool {
	where := l.Namespace + " on " + l.Target.String()
	if _, err := os.Stat(l.Target.Kubeconfig); errors.Is(err, fs.ErrNotExist) {
		// A local cluster taken down removes its kubeconfig, and its
		// namespaces with it.
		s.Gone, s.Runs = append(s.Gone, where), append(s.Runs, Run{l.Namespace, l.Target})
		return true
	}
	cs, err := l.Target.Client(requestTimeout)
	if err != nil {
		s.Left = append(s.Left, err)
		return false
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, l.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.Gone, s.Runs = append(s.Gone, where), append(s.Runs, Run{l.Namespace, l.Target})
		return true
	}
	if err != nil {
		s.Left = append(s.Left, fmt.Errorf("namespace %s: %w", where, err))
		return false
	}
	want := l.labels()
	for _, k := range []string{LabelManagedBy, LabelRun, LabelPID, LabelBoot} {
		if ns.Labels[k] != want[k] {
			s.Left = append(s.Left, fmt.Errorf("namespace %s was not created by msbench pid %s (label %s is %q, the lease says %q): left alone", where, strconv.Itoa(l.PID), k, ns.Labels[k], want[k]))
			return true
		}
	}
	ctx, cancel := context.WithTimeout(ctx, deleteWait)
	defer cancel()
	if err := deleteNamespace(ctx, cs, l.Namespace); err != nil {
		s.Left = append(s.Left, fmt.Errorf("namespace %s: %w", where, err))
		return false
	}
	s.Deleted, s.Runs = append(s.Deleted, where), append(s.Runs, Run{l.Namespace, l.Target})
	return true
}
