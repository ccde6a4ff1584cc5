package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/cluster/clustertest"
	"github.com/msbench/msbench/internal/kube"
)

var kubeCluster = clustertest.Shared{Netns: "msbench-kube-cmd"}

// clusterStudy is faas-gateway cut to what a test needs: one framework,
// one policy, no delay, no A/A twin, /math only, and enough of it that a
// signal finds the run measuring.
func clusterStudy(t *testing.T) (file, root string) {
	t.Helper()
	root, err := checkout.Root("")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "studies", "faas-gateway", "study.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	profile := `profiles:
  clustertest:
    repetitions: 1
    aa: none
    variants: {framework: [nethttp], policy: [pooled], delay: [0ms]}
    steps:
      math: {requests: 100000, warmup: {requests: 10}}
    skip: [empty, sleep, image]
`
	text := strings.Replace(string(data), "profiles:\n", profile, 1)
	file = filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, root
}

// A run on a cluster stopped by Ctrl-C, SIGTERM, or SIGKILL and the next
// msbench's start leaves no namespace (and so no pod) and no image it
// imported; what it measured before is kept.
func TestRunOnClusterLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs a study on the local cluster")
	}
	c := kubeCluster.Get(t)
	bin := msbenchBinary(t)
	file, root := clusterStudy(t)
	cs, err := kube.Target{Kubeconfig: c.Kubeconfig()}.Client(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			results := t.TempDir()
			cmd := exec.Command(bin, "run", file, "--profile", "clustertest", "--root", root, "--results", results, "--kubeconfig", c.Kubeconfig())
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			out := watch(stderr)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			out.waitFor(t, "math [1/1]", 15*time.Minute)
			ns := regexp.MustCompile(`namespace (msbench-\S+)`).FindStringSubmatch(out.String())
			if ns == nil {
				t.Fatalf("no namespace in the run's output:\n%s", out)
			}
			prefix := "msbench.local/" + ns[1] + "/"
			if imported := images(t, c, prefix); len(imported) < 2 {
				t.Fatalf("images under %s while the run measures: %v, want the service's and the generator's", prefix, imported)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			switch {
			case sig == syscall.SIGKILL:
				// The next msbench, whatever its command, sweeps what the
				// killed one left.
				if out, err := exec.Command(bin, "clean").CombinedOutput(); err != nil || !strings.Contains(string(out), ns[1]) {
					t.Fatalf("msbench clean after the SIGKILL: %v, its output does not name %s:\n%s", err, ns[1], out)
				}
			case !errors.As(err, &exit) || exit.ExitCode() != 130:
				t.Fatalf("after %v: %v, want exit 130; output:\n%s", sig, err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if got, err := cs.CoreV1().Namespaces().Get(ctx, ns[1], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s after %v: %v (phase %s), want it gone", ns[1], sig, err, got.Status.Phase)
			}
			if left := images(t, c, prefix); len(left) > 0 {
				t.Errorf("images of the run left after %v: %v", sig, left)
			}
		})
	}
}

// images lists the cluster's images whose names begin with prefix.
func images(t *testing.T, c *cluster.Cluster, prefix string) []string {
	t.Helper()
	names, err := c.Images(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return names
}
