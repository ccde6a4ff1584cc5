package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequiredRules are the rights msbench needs on a cluster. The run's
// namespace does not exist before the run, so they are cluster-wide:
// RBAC cannot scope a right to namespaces that carry a label. Secrets
// can be created, never read back: pods read them, msbench keeps its own
// copy. A namespace's contents go with the namespace; msbench deletes
// inside it only what a fault or the end of a deployment takes away (pods,
// their ReplicaSets, Services and Secret), as the next deployment of an
// interleaved run shares the namespace.
func RequiredRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		// The run's namespace: created, watched until gone, and found by
		// the sweep after a hard kill.
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
		// The study's services, dependencies and generators.
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "get", "list", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "get", "list"}},
		// Each service instance runs under a ReplicaSet of one pod, scaled
		// to 0 by a kill and back by a restart.
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"create", "get", "list", "watch", "patch", "delete"}},
		// A link pod's faults are set through its Service's control port.
		{APIGroups: []string{""}, Resources: []string{"services/proxy"}, Verbs: []string{"get", "create"}},
		// A deployment's Secret (its services' passwords and keys) goes at
		// its end; none is ever read back.
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "delete"}},
		// The generators' account without rights, and the namespace's
		// default one, waited for before the first pod.
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"create", "get"}},
		// Generators' results are read by exec; every pod's output by log.
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		// Provenance, placement, and the kubelets' Summary API for CPU and
		// memory.
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}},
	}
}

// ClusterRole is a ClusterRole named name with the rules msbench needs.
func ClusterRole(name string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelManagedBy: managedBy}},
		Rules:      RequiredRules(),
	}
}

// ClusterRoleManifest is ClusterRole(name) as a manifest for
// `kubectl apply -f -` (JSON, which kubectl reads as YAML), for a
// cluster's administrator to grant msbench's identity with a
// ClusterRoleBinding.
func ClusterRoleManifest(name string) string {
	// A struct of strings and slices of strings always marshals.
	data, _ := json.MarshalIndent(ClusterRole(name), "", "  ")
	return string(data) + "\n"
}

// GeneratorAccount is the service account generator pods run as: no
// role is bound to it and its token is not mounted, so a generator
// cannot call the API.
const GeneratorAccount = "msbench-generator"

// CreateGeneratorAccount creates GeneratorAccount in the namespace; pods
// name it as their serviceAccountName.
func (n *Namespace) CreateGeneratorAccount(ctx context.Context) error {
	no := false
	sa := &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: GeneratorAccount, Labels: map[string]string{LabelManagedBy: managedBy}},
		AutomountServiceAccountToken: &no,
	}
	if _, err := n.client.CoreV1().ServiceAccounts(n.Name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: service account %s: %w", n, GeneratorAccount, err)
	}
	return nil
}
