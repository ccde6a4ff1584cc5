package kubedeploy

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/study"
)

// kubeletExpand expands text as the kubelet expands a container's command
// and environment values: $$ is $, $(NAME) is NAME's value if vars has
// it and stays as it is otherwise, and a value put in is not expanded
// again.
func kubeletExpand(text string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != '$' || i+1 == len(text) {
			b.WriteByte(text[i])
			continue
		}
		switch next := text[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(text[i:], ')')
			if v, ok := vars[text[i+2:max(i+2, i+end)]]; end > 0 && ok {
				b.WriteString(v)
				i += end
			} else {
				b.WriteByte('$')
			}
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// resolve is what the container sees: its environment, each variable
// expanded with those listed before it (a secret's from the Secret), and
// its command expanded with all of them.
func resolve(t *testing.T, c corev1.Container, secret string, data map[string]string, podIP string) (command string, env map[string]string) {
	t.Helper()
	env = map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = kubeletExpand(e.Value, env)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = podIP
		case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret:
			v, ok := data[e.ValueFrom.SecretKeyRef.Key]
			if !ok {
				t.Fatalf("%s names the Secret's key %q, which it does not have", e.Name, e.ValueFrom.SecretKeyRef.Key)
			}
			env[e.Name] = v
		default:
			t.Fatalf("variable %s from %+v", e.Name, e.ValueFrom)
		}
	}
	return kubeletExpand(c.Command[2], env), env
}

// A service's pod spec holds no secret, wherever the study puts one, and
// the container still sees every value as expanded.
func TestNoSecretInTheManifest(t *testing.T) {
	const (
		password = "Pw4tsWv7QmZ2"              // a dependency's
		key      = password + "-kEy$(HOME)$$x" // begins with the password, and holds the kubelet's syntax
		podIP    = "10.244.0.7"
	)
	values := map[string]string{
		"build.x": "/b", "dep.db.password": password, "dep.db.url": "postgres://msbench:" + password + "@10.96.0.3:5432/db",
		"tokens.user.secret": key, "tokens.user.public_key": "",
	}
	ready := study.Ready{Timeout: time.Second}
	for _, tc := range []struct {
		name string
		svc  *study.Service
		// want are the command after "exec " and the study's variables
		// as the container must see them.
		command string
		env     map[string]string
		secrets []string // the secrets its spec must name, by value
	}{
		{name: "in the command", svc: &study.Service{Name: "c", Command: "{build.x}/app --password={dep.db.password}", Ready: ready},
			command: "/b/app --password=" + password, secrets: []string{password}},
		{name: "in a variable, inside a url", svc: &study.Service{Name: "e", Command: "{build.x}/app", Env: [][2]string{{"DATABASE_URL", "{dep.db.url}"}, {"ADDR", "{addr}"}}, Ready: ready},
			command: "/b/app", env: map[string]string{"DATABASE_URL": values["dep.db.url"], "ADDR": podIP + ":8080"}, secrets: []string{password}},
		{name: "twice in the command and in variables", svc: &study.Service{Name: "t", Command: "{build.x}/app {dep.db.password} {dep.db.password}",
			Env: [][2]string{{"A", "{dep.db.password}"}, {"B", "{dep.db.password}:{dep.db.password}"}}, Ready: ready},
			command: "/b/app " + password + " " + password, env: map[string]string{"A": password, "B": password + ":" + password}, secrets: []string{password}},
		{name: "one secret holding another", svc: &study.Service{Name: "h", Command: "{build.x}/app -k {tokens.user.secret} -p {dep.db.password}",
			Env: [][2]string{{"JWT_SECRET", "{tokens.user.secret}"}}, Ready: ready},
			command: "/b/app -k " + key + " -p " + password, env: map[string]string{"JWT_SECRET": key}, secrets: []string{key, password}},
		{name: "beside the study's own $", svc: &study.Service{Name: "d", Command: "{build.x}/app $HOME $${dep.db.password}$ $({tokens.user.secret})",
			Env: [][2]string{{"X", "$(HOME)${dep.db.password}$$"}}, Ready: ready},
			command: "/b/app $HOME $$" + password + "$ $(" + key + ")", env: map[string]string{"X": "$(HOME)$" + password + "$$"}, secrets: []string{key, password}},
		{name: "none used, none named", svc: &study.Service{Name: "n", Command: "{build.x}/app", Env: [][2]string{{"ADDR", "{addr}"}}, Ready: ready},
			command: "/b/app", env: map[string]string{"ADDR": podIP + ":8080"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secrets := Secrets(values)
			if !slices.Equal(secrets, []string{key, password}) {
				t.Fatalf("secrets %q, want the token's key and the password, longest first", secrets)
			}
			rs, err := replicaSet(instanceSpec{svc: tc.svc, name: tc.svc.Name, object: tc.svc.Name, values: values, image: "msbench.local/x:1", root: "/repo",
				secrets: secrets, secretName: "secrets"})
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := json.Marshal(rs)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if strings.Contains(string(manifest), s) || strings.Contains(string(manifest), base64.StdEncoding.EncodeToString([]byte(s))) {
					t.Errorf("the ReplicaSet holds the secret %q:\n%s", s, manifest)
				}
			}
			c := rs.Spec.Template.Spec.Containers[0]
			data := map[string]string{}
			var named []string
			for n, s := range secrets {
				data[secretEnv(n)] = s
			}
			for _, e := range c.Env {
				if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
					named = append(named, data[r.SecretKeyRef.Key])
				}
			}
			if !slices.Equal(named, tc.secrets) {
				t.Errorf("the pod takes the secrets %q from the Secret, want %q", named, tc.secrets)
			}
			command, env := resolve(t, c, "secrets", data, podIP)
			if command != "exec "+tc.command {
				t.Errorf("the container runs %q, want %q", command, "exec "+tc.command)
			}
			for k, want := range tc.env {
				if env[k] != want {
					t.Errorf("the container's %s is %q, want %q", k, env[k], want)
				}
			}
		})
	}
}

// A probe cannot name a variable: a readiness check's URL with a secret
// is refused, and the error does not quote it.
func TestSecretInReadyCheck(t *testing.T) {
	const token = "tok3nTok3nTok3n"
	svc := &study.Service{Name: "r", Command: "x", Ready: study.Ready{HTTP: "http://{addr}/healthz?token={tokens.user.token}", Timeout: time.Second}}
	_, err := replicaSet(instanceSpec{svc: svc, name: "r", object: "r", values: map[string]string{"tokens.user.token": token}, image: "msbench.local/x:1", root: "/repo",
		secrets: []string{token}, secretName: "secrets"})
	if err == nil || !strings.Contains(err.Error(), "holds a secret") || strings.Contains(err.Error(), token) {
		t.Errorf("err %v, want a refusal that does not quote the token", err)
	}
}

// Errors and saved logs withhold every secret, plain or in base64, a
// secret holding another whole.
func TestWithheld(t *testing.T) {
	const short, long = "s3cretPassw0rd", "xx-s3cretPassw0rd-yy"
	d := &Deployment{withheld: kube.NewWithholder(short, long, short, "")}
	for _, tc := range []struct{ in, want string }{
		{"login with " + short + " failed", "login with [withheld] failed"},
		{"key " + long + ".", "key [withheld]."},
		{`"data":{"MSBENCH_SECRET_0":"` + base64.StdEncoding.EncodeToString([]byte(long)) + `"}`, `"data":{"MSBENCH_SECRET_0":"[withheld]"}`},
		{"no secret here", "no secret here"},
	} {
		if got := d.withheld.Error(errors.New(tc.in)); got.Error() != tc.want {
			t.Errorf("redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if d.withheld.Error(nil) != nil {
		t.Error("redact(nil) is not nil")
	}
	// An error without a secret keeps its causes.
	cause := errors.New("cause")
	if err := d.withheld.Error(cause); err != cause {
		t.Errorf("redact changed %v", err)
	}

	log := filepath.Join(t.TempDir(), "svc.log")
	output := "listening\nDATABASE_URL=postgres://u:" + short + "@db\nkey " + long + " and no newline at the end"
	if err := appendTo(log, strings.NewReader(output), d.withheld); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(log)
	if want := "listening\nDATABASE_URL=postgres://u:[withheld]@db\nkey [withheld] and no newline at the end"; err != nil || string(got) != want {
		t.Errorf("saved log %q (%v), want %q", got, err, want)
	}
}

// Secrets picks the lab's secret values by their placeholders' names.
func TestSecrets(t *testing.T) {
	got := Secrets(map[string]string{
		"dep.db.password": "pw", "dep.db.url": "postgres://u:pw@h/db", "dep.db.user": "msbench",
		"tokens.user.secret": "hmac", "tokens.user.token": "jwt.jwt.jwt", "tokens.rsa.secret": "", "tokens.rsa.public_key": "PEM",
		"build.x": "/b", "password": "not a dependency's",
	})
	if want := []string{"jwt.jwt.jwt", "hmac", "pw"}; !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
}
