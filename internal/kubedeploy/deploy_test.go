package kubedeploy

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/msbench/msbench/internal/study"
)

// A dialer given a link's address sees it in place of the service's,
// also in the variant's attributes; the others see the service's.
func TestDialerValues(t *testing.T) {
	s := &study.Study{Variants: []study.Axis{{Name: "impl", Values: []string{"a"}, Attrs: map[string]map[string]string{"a": {"peer": "http://{service.rpc.addr}/"}}}}}
	d := &Deployment{c: Config{Study: s, Variant: s.Matrix()[0], Dial: map[string]map[string]string{"gateway": {"service.rpc.addr": "10.0.0.9:7000"}}}}
	shared := map[string]string{"service.rpc.addr": "10.96.0.10:8080", "impl": "a", "impl.peer": "http://10.96.0.10:8080/"}
	for service, want := range map[string][2]string{
		"gateway": {"10.0.0.9:7000", "http://10.0.0.9:7000/"},
		"other":   {"10.96.0.10:8080", "http://10.96.0.10:8080/"},
	} {
		got, err := d.dialerValues(service, shared)
		if err != nil || got["service.rpc.addr"] != want[0] || got["impl.peer"] != want[1] {
			t.Errorf("%s sees rpc at %q, peer %q (%v); want %q", service, got["service.rpc.addr"], got["impl.peer"], err, want)
		}
	}
	if shared["service.rpc.addr"] != "10.96.0.10:8080" {
		t.Error("a dialer's values changed the shared ones")
	}
}

// Crashed may be asked while a fault takes an instance down (the run
// watches for crashes as its events fire): no race, and the killed
// instance is no crash.
func TestCrashedDuringKill(t *testing.T) {
	in := &instance{Instance: Instance{Name: "rpc", Service: "rpc", Pod: "rpc-abcde", Container: "rpc"}, object: "rpc"}
	one := int32(1)
	cs := fake.NewSimpleClientset(
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rpc", Namespace: "ns"}, Spec: appsv1.ReplicaSetSpec{Replicas: &one}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rpc-abcde", Namespace: "ns", Labels: map[string]string{LabelInstance: "rpc"}}},
	)
	d := &Deployment{c: Config{Progress: func(string, ...any) {}}, cs: cs, ns: "ns", instances: []*instance{in}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			if in, crashed := d.Crashed(); crashed {
				t.Errorf("%s crashed, though killed", in.Name)
			}
		}
	}()
	if err := d.Kill("rpc"); err != nil {
		t.Fatal(err)
	}
	<-done
	if got := d.Instances("rpc")[0].Pod; got != "" {
		t.Errorf("killed rpc has pod %q", got)
	}
	rs, err := cs.AppsV1().ReplicaSets("ns").Get(context.Background(), "rpc", metav1.GetOptions{})
	if err != nil || *rs.Spec.Replicas != 0 {
		t.Errorf("rpc's ReplicaSet not scaled to 0: %+v, %v", rs.Spec.Replicas, err)
	}
}
