package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// upChildEnv, when set, makes the test binary an Up of its own in that
// state directory, as `msbench cluster up` is: a process that starts the
// cluster and exits, or is killed on the way.
const upChildEnv = "MSBENCH_CLUSTER_TEST_UP"

func TestMain(m *testing.M) {
	if dir := os.Getenv(upChildEnv); dir != "" {
		if _, err := Up(context.Background(), Options{StateDir: dir, Netns: testNetns}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func upChild(stateDir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), upChildEnv+"="+stateDir)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestClusterOutlivesItsUp: the cluster an Up started keeps running after
// that process exits, and another process takes it down.
func TestClusterOutlivesItsUp(t *testing.T) {
	clusterMachine(t)
	stateDir := testStateDir(t)
	before := observe(t, stateDir)
	if err := upChild(stateDir).Run(); err != nil {
		t.Fatalf("up in a child process: %v", err)
	}
	c, err := Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	kc := client(t, c.Kubeconfig())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the cluster did not outlive its up: %v", err)
	}
	if len(nodes.Items) != 1 || !nodeIsReady(nodes.Items[0]) {
		t.Errorf("nodes = %+v, want one Ready", nodes.Items)
	}
	if got := nodes.Items[0].Status.NodeInfo.KubeletVersion; got != KubernetesVersion {
		t.Errorf("kubelet version %s, want %s", got, KubernetesVersion)
	}
	if err := Down(ctx, stateDir); err != nil {
		t.Fatal(err)
	}
	leftNothing(t, before, stateDir)
}

// TestKilledUpIsTakenDown: an Up killed half-way leaves a cluster that is
// not ready, which SweepDead takes down, and so does the next Up in the
// same state directory before it starts.
func TestKilledUpIsTakenDown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		takeDown func(context.Context, *testing.T, string)
	}{
		{"by SweepDead", func(ctx context.Context, t *testing.T, stateDir string) {
			if _, err := Open(stateDir); err == nil {
				t.Error("Open accepted a cluster whose up was killed")
			}
			if swept, err := SweepDead(ctx, stateDir); !swept || err != nil {
				t.Fatalf("SweepDead = %v, %v; want true, nil", swept, err)
			}
		}},
		{"by the next Up", func(ctx context.Context, t *testing.T, stateDir string) {
			c, err := Up(ctx, Options{StateDir: stateDir, Netns: testNetns, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Down(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clusterMachine(t)
			stateDir := testStateDir(t)
			before := observe(t, stateDir)
			killedUp(t, stateDir)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tc.takeDown(ctx, t, stateDir)
			leftNothing(t, before, stateDir)
		})
	}
}

// killedUp starts an Up in a child process and kills it once the API
// server has started: etcd and containerd run, the namespace, mounts and
// state are all there.
func killedUp(t *testing.T, stateDir string) {
	t.Helper()
	child := upChild(stateDir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	poll(t, ctx, "the child's API server", func() error {
		st, err := readState(layout{stateDir})
		if err != nil || len(st.Processes) < 3 {
			return fmt.Errorf("state %+v (%v)", st.Processes, err)
		}
		return nil
	})
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
}

func nodeIsReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestCancelledUpLeavesNothing: an Up whose context ends half-way (Ctrl-C
// on msbench cluster up) takes down what it started before returning.
func TestCancelledUpLeavesNothing(t *testing.T) {
	clusterMachine(t)
	stateDir := testStateDir(t)
	before := observe(t, stateDir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if st, err := readState(layout{stateDir}); err == nil && len(st.Processes) >= 3 {
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if _, err := Up(ctx, Options{StateDir: stateDir, Netns: testNetns, Log: testLog{t}}); err == nil {
		t.Fatal("Up succeeded although its context was cancelled half-way")
	}
	leftNothing(t, before, stateDir)
}
