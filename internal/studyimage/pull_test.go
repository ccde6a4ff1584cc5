package studyimage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPullPolicy: an image imported into the local cluster is never
// pulled; one of a registry is pulled when the node lacks it.
func TestPullPolicy(t *testing.T) {
	for ref, want := range map[string]corev1.PullPolicy{
		Registry + "/msbench-generator:0123456789ab": corev1.PullNever,
		"registry.example/msbench-generator:1":       corev1.PullIfNotPresent,
		"msbench.localhost/x:1":                      corev1.PullIfNotPresent,
	} {
		if got := PullPolicy(ref); got != want {
			t.Errorf("%s: %s, want %s", ref, got, want)
		}
	}
}
