package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	holder "github.com/msbench/msbench/internal/lease"
)

// Labels every namespace msbench creates carries. The sweep deletes a
// namespace only if these match the lease that names it.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by" // "msbench"
	LabelRun       = "msbench.dev/run"
	LabelPID       = "msbench.dev/pid"
	LabelBoot      = "msbench.dev/boot"
	LabelHost      = "msbench.dev/host"
	managedBy      = "msbench"
)

// Timeouts for a busy machine and a remote API server. deleteWait bounds
// the wait for a namespace's contents to be removed (pods get their grace
// period), requestTimeout each request of Delete and Sweep, which run
// when the run's own context is gone.
const (
	deleteWait     = 3 * time.Minute
	readyWait      = 2 * time.Minute
	requestTimeout = 20 * time.Second
)

// Namespace is a run's own namespace. Everything of the run lives in it;
// Delete removes it with everything in it.
type Namespace struct {
	Name   string
	Run    string
	Target Target
	client kubernetes.Interface
	lease  string // the lease file
}

func (n *Namespace) String() string { return "namespace " + n.Name + " on " + n.Target.String() }

// Client is the clientset the namespace was created with.
func (n *Namespace) Client() kubernetes.Interface { return n.client }

// CreateNamespace creates the run's namespace on the target, named name,
// or "msbench-RUN-xxxxxx" when name is empty, labelled with the run and
// this process (pid, boot id, host). It refuses a namespace that exists:
// msbench touches only what it created. A lease file written before the
// namespace is created lets the next msbench's Sweep delete it if this
// process is killed before Delete. It returns once the namespace can take
// pods (its default service account exists).
func CreateNamespace(ctx context.Context, t Target, run, name string) (*Namespace, error) {
	if t.Kubeconfig == "" {
		return nil, errors.New("a run on a cluster needs a kubeconfig")
	}
	t, err := t.absolute()
	if err != nil {
		return nil, err
	}
	if name == "" {
		if name, err = generatedName(run); err != nil {
			return nil, err
		}
	} else if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return nil, fmt.Errorf("namespace %q: %s", name, strings.Join(errs, "; "))
	}
	cs, err := t.Client(0)
	if err != nil {
		return nil, err
	}
	l := newLease(t, name, run)
	n := &Namespace{Name: name, Run: run, Target: t, client: cs, lease: l.path(leaseDir)}
	if err := l.write(leaseDir); err != nil {
		return nil, fmt.Errorf("lease for namespace %s: %w", name, err)
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l.labels()}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			os.Remove(n.lease)
			return nil, fmt.Errorf("namespace %s exists on %s: msbench runs only in a namespace it creates (name another, or leave --namespace out)", name, t)
		}
		// The lease stays: a request that timed out may have created
		// the namespace, which the sweep after this process then finds
		// by its labels (or finds absent, and drops the lease).
		return nil, fmt.Errorf("create namespace %s on %s: %w", name, t, err)
	}
	err = poll(ctx, readyWait, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		err = fmt.Errorf("namespace %s: its default service account: %w", name, err)
		return nil, errors.Join(err, n.Delete(ctx))
	}
	return n, nil
}

// generatedName is "msbench-" and the run id made a DNS label, with a
// random tail so that two runs of one id never share a namespace.
func generatedName(run string) (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("namespace name: %w", err)
	}
	tail := "-" + hex.EncodeToString(b)
	middle := labelValue(strings.ToLower(run))
	if max := validation.DNS1123LabelMaxLength - len("msbench-") - len(tail); len(middle) > max {
		middle = strings.Trim(middle[:max], "-_.")
	}
	middle = strings.NewReplacer("_", "-", ".", "-").Replace(middle)
	if middle == "" {
		return "msbench" + tail, nil
	}
	return "msbench-" + middle + tail, nil
}

// labelValue makes s a valid label value: letters, digits, '-', '_', '.',
// at most 63, starting and ending with a letter or digit.
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	s = string(b)
	if len(s) > validation.LabelValueMaxLength {
		s = s[:validation.LabelValueMaxLength]
	}
	return strings.Trim(s, "-_.")
}

// Delete deletes the namespace and waits until it is gone (its pods
// stopped), then removes the lease. It is called when the run ends, also
// on Ctrl-C, SIGTERM or SIGHUP, when the run's context is already
// cancelled: so it does not stop at ctx's cancellation, only at its own
// bound. If it fails, the lease stays and the next msbench's sweep retries
// once this process is gone.
func (n *Namespace) Delete(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteWait)
	defer cancel()
	if err := deleteNamespace(ctx, n.client, n.Name); err != nil {
		return fmt.Errorf("%s: %w", n, err)
	}
	if err := os.Remove(n.lease); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s deleted, but its lease stays: %w", n, err)
	}
	return nil
}

// deleteNamespace deletes a namespace and waits, within ctx, until the
// API no longer has it.
func deleteNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	background := metav1.DeletePropagationBackground
	err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete: %w", err)
	}
	return poll(ctx, deleteWait, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// poll calls done until it says so, fails, or bound passes; each call has
// requestTimeout.
func poll(ctx context.Context, bound time.Duration, done func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, requestTimeout)
		ok, err := done(rctx)
		rcancel()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("still waiting after %v: %w", bound, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// leaseDir is where namespace leases live; a test points it elsewhere.
var leaseDir = os.TempDir()

const leasePrefix = "msbench-kube-lease-"

// lease records which namespace on which cluster a msbench process
// created, so that the next msbench can delete it if the process died
// without doing so.
type lease struct {
	holder.Process        // the msbench that created the namespace
	Host           string `json:"host"`
	Target         Target `json:"target"`
	Namespace      string `json:"namespace"`
	Run            string `json:"run"`
}

func newLease(t Target, namespace, run string) lease {
	l := lease{Process: holder.Self(), Target: t, Namespace: namespace, Run: run}
	l.Host, _ = os.Hostname()
	return l
}

func (l lease) path(dir string) string {
	return filepath.Join(dir, leasePrefix+strconv.Itoa(l.PID)+"-"+l.Namespace+".json")
}

// labels are the namespace's labels, which name its creator as the lease
// does.
func (l lease) labels() map[string]string {
	return map[string]string{
		LabelManagedBy: managedBy,
		LabelRun:       labelValue(l.Run),
		LabelPID:       strconv.Itoa(l.PID),
		LabelBoot:      labelValue(l.Boot),
		LabelHost:      labelValue(l.Host),
	}
}

func (l lease) write(dir string) error {
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	// The temporary name does not match the lease pattern, so a sweep
	// never reads half a file.
	final := l.path(dir)
	tmp := filepath.Join(dir, "."+filepath.Base(final)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, final)
}
