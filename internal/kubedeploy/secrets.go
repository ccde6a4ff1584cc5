package kubedeploy

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msbench/msbench/internal/kube"
)

// Secrets are the values of the lab's placeholders that are secret, for
// Config.Secrets: every dependency's password (dep.NAME.password, which
// its url and dsn hold too) and every token's HMAC key and the token
// itself (tokens.NAME.secret, tokens.NAME.token).
func Secrets(values map[string]string) []string {
	var out []string
	for k, v := range values {
		dep := strings.HasPrefix(k, "dep.") && strings.HasSuffix(k, ".password")
		token := strings.HasPrefix(k, "tokens.") && (strings.HasSuffix(k, ".secret") || strings.HasSuffix(k, ".token"))
		if dep || token {
			out = append(out, v)
		}
	}
	return secretList(out)
}

// secretEnv is the variable, and the deployment's Secret's key, that
// holds a deployment's secret number n.
func secretEnv(n int) string { return "MSBENCH_SECRET_" + strconv.Itoa(n) }

// secretList is secrets as a deployment numbers them: without repeats or
// empty values, longest first (kubeletText's order), ties in byte order
// so that every pod numbers them alike.
func secretList(secrets []string) []string {
	out := slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

// createSecret creates the deployment's Secret, which holds secrets[N]
// at key secretEnv(N).
func (d *Deployment) createSecret(ctx context.Context) error {
	name := objectName(d.c.Scope, "secrets")
	data := map[string][]byte{}
	for n, s := range d.secrets {
		data[secretEnv(n)] = []byte(s)
	}
	obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: kube.Labels(LabelInstance, name)}, Type: corev1.SecretTypeOpaque, Data: data}
	rctx, cancel := context.WithTimeout(ctx, apiWait)
	defer cancel()
	// An API server may echo the object it refused: Deploy redacts.
	if _, err := d.cs.CoreV1().Secrets(d.ns).Create(rctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("deploy: the Secret %s: %w", name, err)
	}
	d.secret = name
	return nil
}
