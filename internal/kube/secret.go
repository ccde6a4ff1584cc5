package kube

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Secret is a Kubernetes Secret of fresh random values, one per key,
// that pods read through secretKeyRef. Its values never appear in its
// String, its %v or %#v, its JSON, or an error of this package.
type Secret struct {
	Name   string
	keys   []string
	values map[string]string
}

// secretBytes is the entropy of each value: 192 bits, as 32 characters
// of URL-safe base64 that fit a password, an environment variable or a
// URL.
const secretBytes = 24

// CreateSecret creates a Secret named name in the namespace with a fresh
// random value for each key.
func (n *Namespace) CreateSecret(ctx context.Context, name string, keys ...string) (*Secret, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("secret %s: no keys", name)
	}
	s := &Secret{Name: name, keys: slices.Clone(keys), values: map[string]string{}}
	data := map[string][]byte{}
	for _, k := range keys {
		b := make([]byte, secretBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		s.values[k] = base64.RawURLEncoding.EncodeToString(b)
		data[k] = []byte(s.values[k])
	}
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelManagedBy: managedBy}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if _, err := n.client.CoreV1().Secrets(n.Name).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return nil, s.redact(fmt.Errorf("%s: create secret %s: %w", n, name, err))
	}
	return s, nil
}

// Env is a container's environment variable env holding the value of
// key, read by the kubelet from the Secret.
func (s Secret) Env(env, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: key},
	}}
}

// Value is key's value, for msbench's own use (e.g. a generator's token
// or a readiness check that logs in); it must not be written anywhere.
func (s Secret) Value(key string) (string, error) {
	v, ok := s.values[key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %q (it has %s)", s.Name, key, strings.Join(s.keys, ", "))
	}
	return v, nil
}

func (s Secret) String() string {
	return "secret " + s.Name + " (" + strings.Join(s.keys, ", ") + ": values withheld)"
}

// Format makes every verb print String: %+v and %#v would print the
// values, and value receivers cover a Secret printed by value too.
func (s Secret) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// MarshalJSON records the secret's name and keys, never its values.
func (s Secret) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name string   `json:"name"`
		Keys []string `json:"keys"`
	}{s.Name, s.keys})
}

// redact replaces the secret's values in err's message: an API server or
// an admission webhook may echo the object it refused.
func (s Secret) redact(err error) error {
	msg := err.Error()
	for _, k := range s.keys {
		msg = strings.ReplaceAll(msg, s.values[k], "[withheld]")
		msg = strings.ReplaceAll(msg, base64.StdEncoding.EncodeToString([]byte(s.values[k])), "[withheld]")
	}
	return errors.New(msg)
}
