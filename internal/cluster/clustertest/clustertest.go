// Package clustertest gives a package's integration tests the local
// cluster they run on: the one whose state directory MSBENCH_KUBE_TEST_STATE
// names (left running), or one brought up for the package and taken down
// by its TestMain. Tests skip, saying why, without root or without the
// Debian packages the cluster needs.
package clustertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/cluster"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// StateEnv names the state directory of a running cluster to use.
const StateEnv = "MSBENCH_KUBE_TEST_STATE"

// Shared is one package's cluster, made on first use.
type Shared struct {
	// Netns is the network namespace of a cluster the package brings up:
	// unique per package, so that a leftover is traced to its tests.
	Netns string

	once    sync.Once
	c       *cluster.Cluster
	started bool
	skip    string
	err     error
}

// Get returns the cluster, bringing one up on first use; it skips the
// test where none can run. Other packages' tests, run beside these by
// go test ./..., may hold the machine's one cluster: Up waits for it.
func (s *Shared) Get(t *testing.T) *cluster.Cluster {
	t.Helper()
	s.once.Do(func() { s.skip, s.err = s.setUp(t) })
	if s.skip != "" {
		t.Skip(s.skip)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.c
}

func (s *Shared) setUp(t *testing.T) (skip string, err error) {
	if os.Geteuid() != 0 {
		return "the local cluster needs root; skipped", nil
	}
	if dir := os.Getenv(StateEnv); dir != "" {
		s.c, err = cluster.Open(dir)
		return "", err
	}
	if missing := cluster.MissingPackages(); len(missing) > 0 {
		return fmt.Sprintf("the local cluster needs Debian packages %v (make deps)", missing), nil
	}
	// In /tmp, not $TMPDIR: cmd/msbench's tests point that at a directory
	// of their own, too deep for the cluster's sockets.
	dir, err := os.MkdirTemp("/tmp", "msbench-"+s.Netns+"-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if s.c, err = cluster.Up(ctx, cluster.Options{StateDir: dir, Netns: s.Netns, Log: testLog{t}, WaitForMachine: 15 * time.Minute}); err != nil {
		// Up leaves nothing of a cluster that did not come up but the
		// state directory made for it here.
		os.RemoveAll(dir)
		return "", fmt.Errorf("cluster up: %w", err)
	}
	s.started = true
	return "", nil
}

// Down takes down a cluster the package brought up (TestMain calls it
// after m.Run); one it was given runs on.
func (s *Shared) Down() error {
	if !s.started {
		return nil
	}
	return s.c.Down(context.Background())
}

// Main is a package's TestMain: its tests, then Down, exiting 1 when the
// cluster could not be taken down.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if err := s.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster down:", err)
		code = 1
	}
	os.Exit(code)
}

// Get GETs url with client (one that dials inside the cluster's network,
// Cluster.DialContext) and returns the body of a 200 answer, or an error
// saying what came instead.
func Get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), err
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// AwaitAllowed waits until the API server lets cs's identity do verb on
// resource. Its authorizer learns of a new RoleBinding from an informer, a
// moment after the API accepted it: a request in between is forbidden.
func AwaitAllowed(ctx context.Context, cs kubernetes.Interface, verb, resource string) error {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: resource},
	}}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the identity may still not %s %s a minute after its binding (%v)", verb, resource, err)
		}
	}
}
