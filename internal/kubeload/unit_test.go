package kubeload

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/msbench/msbench/internal/fanout"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/kubehosts"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/studyimage"
)

// TestPod: a generator pod runs idle msbench as the generators' account
// without a token, unprivileged on a read-only root, with its CPU
// requested and limited alike, or neither.
func TestPod(t *testing.T) {
	for _, cpus := range []float64{0, 0.5, 2} {
		p := &Pool{c: Config{Image: "img", CPUs: cpus}}
		pod := p.pod()
		c := pod.Spec.Containers[0]
		sc := c.SecurityContext
		switch {
		case pod.Spec.ServiceAccountName != kube.GeneratorAccount || *pod.Spec.AutomountServiceAccountToken:
			t.Errorf("account %q, token mounted %v", pod.Spec.ServiceAccountName, *pod.Spec.AutomountServiceAccountToken)
		case pod.Spec.RestartPolicy != corev1.RestartPolicyNever:
			t.Errorf("restart policy %s", pod.Spec.RestartPolicy)
		case strings.Join(c.Command, " ") != studyimage.GeneratorBinary+" generate --idle" || c.Image != "img":
			t.Errorf("runs %v of %s", c.Command, c.Image)
		case !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1:
			t.Errorf("security context %+v", sc)
		case len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/tmp":
			t.Errorf("mounts %+v, want an emptyDir at /tmp", c.VolumeMounts)
		case c.ImagePullPolicy != corev1.PullIfNotPresent:
			t.Errorf("pull policy %s for an image of a registry", c.ImagePullPolicy)
		}
		req, lim := c.Resources.Requests.Cpu(), c.Resources.Limits.Cpu()
		if want := int64(cpus * 1000); req.MilliValue() != want || lim.MilliValue() != want {
			t.Errorf("%v CPUs: request %v, limit %v", cpus, req, lim)
		}
	}
}

// TestPodOnTheGeneratorsNode: with hosts the generator pods are bound to
// the node kubehosts left them; without, they go anywhere.
func TestPodOnTheGeneratorsNode(t *testing.T) {
	for _, node := range []string{"n3", ""} {
		p := &Pool{c: Config{Image: "img", Node: node}}
		if got, want := p.pod().Spec.Affinity, kubehosts.Affinity(node); !reflect.DeepEqual(got, want) {
			t.Errorf("node %q: affinity %+v, want %+v", node, got, want)
		}
	}
}

// TestReadStderr: progress lines go to progress, the last other lines
// make an error's tail.
func TestReadStderr(t *testing.T) {
	var in bytes.Buffer
	for i := range 30 {
		if i%2 == 0 {
			fanout.WriteProgress(&in, load.Snapshot{Requests: int64(i)})
		} else {
			in.WriteString("line " + string(rune('a'+i%26)) + "\n")
		}
	}
	var got []int64
	tail := readStderr(&in, func(s load.Snapshot) { got = append(got, s.Requests) })
	if len(got) != 15 || got[14] != 28 {
		t.Errorf("progress %v", got)
	}
	if lines := strings.Split(strings.TrimPrefix(tail, "; its stderr ends:\n"), "\n"); len(lines) != 15 || strings.Contains(tail, "msbench-progress") {
		t.Errorf("tail %q", tail)
	}
	if tail := readStderr(strings.NewReader(""), nil); tail != "" {
		t.Errorf("tail of nothing %q", tail)
	}
}

// TestCombine: the display sees every generator's latest snapshot added
// up, the elapsed time and p99 the highest.
func TestCombine(t *testing.T) {
	var last load.Snapshot
	show := combine(2, func(s load.Snapshot) { last = s })
	show(0, load.Snapshot{Elapsed: time.Second, Requests: 10, Errors: 1, RateRPS: 10, P99Ms: 5})
	show(1, load.Snapshot{Elapsed: 2 * time.Second, Requests: 20, RateRPS: 12, P99Ms: 3})
	show(0, load.Snapshot{Elapsed: 2 * time.Second, Requests: 15, Errors: 2, RateRPS: 9, P99Ms: 6})
	if want := (load.Snapshot{Elapsed: 2 * time.Second, Requests: 35, Errors: 2, RateRPS: 21, P99Ms: 6}); last != want {
		t.Errorf("combined %+v, want %+v", last, want)
	}
}

// TestHeld: a held stdin gives its data, then ends only once released.
func TestHeld(t *testing.T) {
	release := make(chan struct{})
	h := held{strings.NewReader("spec"), release}
	buf := make([]byte, 10)
	if n, err := h.Read(buf); n != 4 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := h.Read(buf)
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("ended (%v) before release", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-ended; err != io.EOF {
		t.Errorf("after release: %v, want EOF", err)
	}
}

// TestLead: a load starts at least minLead ahead, more when execs were
// slow or the spec is large.
func TestLead(t *testing.T) {
	p := &Pool{probe: 100 * time.Millisecond}
	if l := p.lead(1000); l < minLead || l > minLead+time.Second {
		t.Errorf("lead %v for a fast exec and a small spec", l)
	}
	p.probe = 2 * time.Second
	if l := p.lead(1000); l < 6*time.Second {
		t.Errorf("lead %v after a 2 s exec, want 3 times that", l)
	}
	if small, large := p.lead(1000), p.lead(50<<20); large <= small {
		t.Errorf("lead %v for 50 MiB, %v for 1 kB", large, small)
	}
}
