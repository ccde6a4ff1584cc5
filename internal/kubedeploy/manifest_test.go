package kubedeploy

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/msbench/msbench/internal/kubehosts"
	"github.com/msbench/msbench/internal/study"
)

func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

func quantities(l corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for k, v := range l {
		out[k] = v.String()
	}
	return out
}

// The manifests of one instance, as faas-gateway's services and hostile
// ones ask.
func TestReplicaSet(t *testing.T) {
	ready := study.Ready{Timeout: 60 * time.Second}
	rpc := &study.Service{Name: "rpc", Command: "{build.faas}/rpcserver", Env: [][2]string{{"ADDR", "{addr}"}, {"DATA_DIR", "{tmp}"}}, Ready: study.Ready{TCP: "{addr}", Timeout: 30 * time.Second}}
	gateway := &study.Service{Name: "gateway", Command: "{build.faas}/gateway-nethttp", Dir: "studies/x",
		Env: [][2]string{{"ADDR", "{addr}"}, {"RPC_ADDR", "{service.rpc.addr}"}}, Ready: study.Ready{HTTP: "http://{addr}/healthz?deep=1", Timeout: 60 * time.Second}}
	values := map[string]string{"build.faas": "/b", "service.rpc.addr": "10.96.0.10:8080"}
	podAddr := "$(" + PodIPEnv + "):8080"
	for _, tc := range []struct {
		name    string
		svc     *study.Service
		cpus    float64
		values  map[string]string
		err     string
		check   func(t *testing.T, c corev1.Container, p corev1.PodSpec)
		command string
	}{
		{name: "rpc binds the pod's address, {tmp} an emptyDir", svc: rpc, values: values, command: "exec /b/rpcserver",
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if c.Env[0].Name != PodIPEnv || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
					t.Errorf("first variable %+v, want %s from status.podIP", c.Env[0], PodIPEnv)
				}
				if e := env(c); e["ADDR"] != podAddr || e["DATA_DIR"] != TmpDir || e["TMPDIR"] != TmpDir {
					t.Errorf("env %v", e)
				}
				if c.WorkingDir != "/repo" {
					t.Errorf("working dir %q", c.WorkingDir)
				}
				if pr := c.StartupProbe; pr == nil || pr.TCPSocket == nil || pr.TCPSocket.Port.IntValue() != Port || pr.FailureThreshold != 31 || pr.PeriodSeconds != 1 {
					t.Errorf("probe %+v", pr)
				}
				if c.ReadinessProbe != nil || c.LivenessProbe != nil {
					t.Error("a probe that goes on probing during the steps")
				}
				if len(p.Volumes) != 1 || p.Volumes[0].EmptyDir == nil || c.VolumeMounts[0].MountPath != TmpDir {
					t.Errorf("volumes %+v, mounts %+v", p.Volumes, c.VolumeMounts)
				}
				if c.Resources.Limits != nil || c.Resources.Requests != nil {
					t.Errorf("resources %+v, want none", c.Resources)
				}
				if *p.EnableServiceLinks || *p.AutomountServiceAccountToken || *p.TerminationGracePeriodSeconds != 5 {
					t.Errorf("pod %+v", p)
				}
			}},
		{name: "gateway dials rpc's Service, probed over HTTP in its dir", svc: gateway, values: values, command: "exec /b/gateway-nethttp",
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if e := env(c); e["RPC_ADDR"] != "10.96.0.10:8080" {
					t.Errorf("env %v", e)
				}
				if c.WorkingDir != filepath.Join("/repo", "studies/x") {
					t.Errorf("working dir %q", c.WorkingDir)
				}
				if pr := c.StartupProbe; pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Path != "/healthz?deep=1" || pr.HTTPGet.Port.IntValue() != Port || pr.HTTPGet.Scheme != corev1.URISchemeHTTP {
					t.Errorf("probe %+v", pr)
				}
			}},
		{name: "a link's address in place of a service's", svc: gateway, values: map[string]string{"build.faas": "/b", "service.rpc.addr": "10.0.0.9:7000"}, command: "exec /b/gateway-nethttp",
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if e := env(c); e["RPC_ADDR"] != "10.0.0.9:7000" {
					t.Errorf("env %v", e)
				}
			}},
		{name: "the kubelet leaves the study's $ alone", values: values,
			svc:     &study.Service{Name: "sh", Command: "echo $HOME $$ $(date) {host}", Env: [][2]string{{"X", "$(HOME)-{host}"}}, Ready: ready},
			command: "exec echo $$HOME $$$$ $$(date) $(" + PodIPEnv + ")",
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if e := env(c); e["X"] != "$$(HOME)-$("+PodIPEnv+")" {
					t.Errorf("env X %q", e["X"])
				}
				if c.StartupProbe != nil {
					t.Errorf("probe %+v without a ready check", c.StartupProbe)
				}
			}},
		{name: "study limits cap, nothing reserved", values: values, command: "exec x",
			svc: &study.Service{Name: "capped", Command: "x", Limits: study.Limits{CPUs: 0.5, MemoryBytes: 256 << 20}, Ready: ready},
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if got := quantities(c.Resources.Limits); got["cpu"] != "500m" || got["memory"] != "256Mi" {
					t.Errorf("limits %v", got)
				}
				if got := quantities(c.Resources.Requests); got["cpu"] != "0" || got["memory"] != "0" {
					t.Errorf("requests %v, want 0", got)
				}
			}},
		{name: "placed: requests are limits", values: values, command: "exec x", cpus: 1,
			svc: &study.Service{Name: "placed", Command: "x", Limits: study.Limits{MemoryBytes: 1 << 30}, Ready: ready},
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				want := map[corev1.ResourceName]string{"cpu": "1", "memory": "1Gi"}
				if got := quantities(c.Resources.Limits); got["cpu"] != want["cpu"] || got["memory"] != want["memory"] {
					t.Errorf("limits %v", got)
				}
				if got := quantities(c.Resources.Requests); got["cpu"] != want["cpu"] || got["memory"] != want["memory"] {
					t.Errorf("requests %v", got)
				}
			}},
		{name: "placed under a lower study limit", values: values, command: "exec x", cpus: 1,
			svc: &study.Service{Name: "placed", Command: "x", Limits: study.Limits{CPUs: 0.25}, Ready: ready},
			check: func(t *testing.T, c corev1.Container, p corev1.PodSpec) {
				if got, want := c.Resources.Requests[corev1.ResourceCPU], resource.MustParse("250m"); got.Cmp(want) != 0 {
					t.Errorf("requests %v", c.Resources.Requests)
				}
			}},
		{name: "a system user is refused", values: values, err: `system user "postgres"`,
			svc: &study.Service{Name: "u", Command: "x", User: "postgres", Ready: ready}},
		{name: "a readiness check of another address is refused", values: values, err: "not the instance's own address",
			svc: &study.Service{Name: "r", Command: "x", Ready: study.Ready{HTTP: "http://{service.rpc.addr}/", Timeout: time.Second}}},
		{name: "an unknown placeholder is named", values: values, err: "{service.db.addr}",
			svc: &study.Service{Name: "r", Command: "x --db {service.db.addr}", Ready: ready}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := replicaSet(instanceSpec{svc: tc.svc, name: tc.svc.Name, object: objectName("", tc.svc.Name), values: tc.values, image: "msbench.local/x:1", cpus: tc.cpus, root: "/repo"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *rs.Spec.Replicas != 1 || rs.Spec.Selector.MatchLabels[LabelInstance] != rs.Name || rs.Spec.Template.Labels[LabelInstance] != rs.Name {
				t.Errorf("replica set %s: %d replicas, selector %v, template labels %v", rs.Name, *rs.Spec.Replicas, rs.Spec.Selector, rs.Spec.Template.Labels)
			}
			p := rs.Spec.Template.Spec
			c := p.Containers[0]
			if want := []string{"/bin/sh", "-c", tc.command}; !slices.Equal(c.Command, want) {
				t.Errorf("command %q, want %q", c.Command, want)
			}
			// Imported into the local cluster: never pulled.
			if c.Image != "msbench.local/x:1" || c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("image %s, %s", c.Image, c.ImagePullPolicy)
			}
			tc.check(t, c, p)
		})
	}
}

// An instance's Service selects its pod alone, on the one port.
func TestServiceManifest(t *testing.T) {
	s := serviceManifest("v1-rpc-2", "rpc")
	if s.Spec.Selector[LabelInstance] != "v1-rpc-2" || len(s.Spec.Selector) != 1 || s.Spec.Ports[0].Port != Port || s.Spec.Ports[0].TargetPort.IntValue() != Port {
		t.Errorf("service %+v", s.Spec)
	}
}

// Every study's names make object names the API takes, distinct.
func TestObjectNames(t *testing.T) {
	seen := map[string]string{}
	for _, tc := range []struct{ scope, instance string }{
		{"", "rpc"}, {"", "rpc-1"}, {"", "Gateway_2"}, {"", "9lives"}, {"nethttp-pooled-0ms-", "gateway"},
		{"", strings.Repeat("long", 20)}, {"", "---"},
	} {
		name := objectName(tc.scope, tc.instance)
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 || len(name) > 57 {
			t.Errorf("%q%q → %q: %v", tc.scope, tc.instance, name, errs)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q are both %q", other, tc.instance, name)
		}
		seen[name] = tc.instance
	}
}

// A service on one of the study's hosts has its pods bound to the host's
// node; one without a node goes where the scheduler puts it.
func TestPinnedToItsHostsNode(t *testing.T) {
	svc := &study.Service{Name: "rpc", Command: "x", Ready: study.Ready{TCP: "{addr}", Timeout: time.Second}}
	for node, want := range map[string]*corev1.Affinity{"n2": kubehosts.Affinity("n2"), "": nil} {
		rs, err := replicaSet(instanceSpec{svc: svc, name: "rpc", object: "rpc", image: "msbench.local/x:1", node: node})
		if err != nil {
			t.Fatal(err)
		}
		if got := rs.Spec.Template.Spec.Affinity; !reflect.DeepEqual(got, want) {
			t.Errorf("node %q: affinity %+v, want %+v", node, got, want)
		}
	}
}
