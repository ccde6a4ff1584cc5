// Package kube is what a run on a Kubernetes cluster needs besides
// deploying the study's services: a namespace of the run's own that is
// deleted at the end or, after a hard kill, by the next msbench's sweep
// (Namespace, Sweep); the least rights msbench and its generators need
// (RequiredRules, ClusterRoleManifest, GeneratorAccount); fresh secrets
// that pods read from a Kubernetes Secret and that never reach a log
// (Secret); what the cluster is (Describe); and per-container CPU and
// memory over a window from the kubelets' Summary API (Sampler).
//
// Everything here goes through the API server with the rights of the
// kubeconfig it is given; nothing assumes the local cluster.
package kube

import (
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Target names the cluster msbench runs on as `--kubeconfig FILE
// [--context C]` do.
type Target struct {
	Kubeconfig string `json:"kubeconfig"`
	// Context is the kubeconfig's context; its current one when empty.
	Context string `json:"context,omitempty"`
}

func (t Target) String() string {
	if t.Context == "" {
		return t.Kubeconfig
	}
	return t.Kubeconfig + " (context " + t.Context + ")"
}

// Config loads the target's client configuration. timeout bounds each
// request (none when zero): a sweep at msbench's start must not hang on a
// cluster that is gone.
func (t Target) Config(timeout time.Duration) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: t.Kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", t, err)
	}
	cfg.Timeout = timeout
	cfg.UserAgent = "msbench"
	// client-go's default of 5 requests a second (bursts of 10) throttles
	// a repetition's deployments stopping at once, dozens of pods each
	// watched until gone; the API server's priority and fairness still
	// guards the cluster.
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// Client is a clientset for the target.
func (t Target) Client(timeout time.Duration) (kubernetes.Interface, error) {
	cfg, err := t.Config(timeout)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", t, err)
	}
	return cs, nil
}

// absolute makes the kubeconfig's path absolute, so that a lease names
// the same file whatever directory the sweeping msbench runs in.
func (t Target) absolute() (Target, error) {
	abs, err := filepath.Abs(t.Kubeconfig)
	if err != nil {
		return t, fmt.Errorf("kubeconfig %s: %w", t.Kubeconfig, err)
	}
	t.Kubeconfig = abs
	return t, nil
}
