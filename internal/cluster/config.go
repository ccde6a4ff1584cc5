package cluster

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strconv"
)

// The cluster's addresses exist only inside its network namespace, so they
// cannot clash with the machine's and no packet to them leaves it.
const (
	// nodeIP is the node's address, on one end of a veth pair whose other
	// end is in the same namespace: the kubelet refuses a loopback node
	// address and this kernel has no dummy device.
	nodeIP     = "10.250.0.1"
	nodePrefix = 24
	podCIDR    = "10.251.0.0/24"
	podGateway = "10.251.0.1"
	// serviceCIDR holds the Services' ClusterIPs, which kube-proxy's
	// rules in the namespace send on to the pods behind them.
	serviceCIDR  = "10.252.0.0/24"
	apiServiceIP = "10.252.0.1"
	apiPort      = 6443
	nodeName     = "msbench-node"
	// etcdClient is etcd's address on the namespace's own loopback.
	etcdClient = "http://127.0.0.1:2379"
	etcdPeer   = "http://127.0.0.1:2380"
	// pauseImage is the sandbox image containerd starts each pod with;
	// the name is local, never pulled.
	pauseImage = "msbench.local/pause:1"
	cniBinDir  = "/usr/lib/cni"
)

// layout names the files of one cluster under its state directory.
type layout struct{ dir string }

// stateLayout is the layout of the state directory dir, made absolute:
// the components are told its paths, and mounts are found by them.
func stateLayout(dir string) (layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, fmt.Errorf("state directory: %w", err)
	}
	return layout{abs}, nil
}

// maxSocketPath is the longest unix socket path containerd accepts
// ("unix socket path too long (> 104)"); the kernel's own limit is 107.
const maxSocketPath = 104

// sockets are the unix sockets the cluster's programs make under the
// state directory: containerd's gRPC and ttrpc ones, the API's forwarder
// and the kubelet's pod-resources one (its device plugins' is a fixed
// path outside it).
func (l layout) sockets() []string {
	return []string{l.containerdSocket(), l.containerdSocket() + ".ttrpc", l.apiSocket(),
		filepath.Join(l.kubeletRoot(), "pod-resources", "kubelet.sock")}
}

// checkSockets refuses a state directory too deep for its sockets before
// anything starts: containerd would otherwise exit at start with the
// reason only in its log.
func (l layout) checkSockets() error {
	for _, s := range l.sockets() {
		if len(s) > maxSocketPath {
			return fmt.Errorf("state directory %q is too long: the socket %s would be %d bytes, over the %d a unix socket path may have; choose one of at most %d bytes", l.dir, s, len(s), maxSocketPath, l.room())
		}
	}
	return nil
}

// room is the longest state directory whose sockets all fit.
func (l layout) room() int {
	most := 0
	for _, s := range l.sockets() {
		most = max(most, len(s)-len(l.dir))
	}
	return maxSocketPath - most
}

func (l layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.dir}, parts...)...)
}

func (l layout) pki(name string) string       { return l.path("pki", name) }
func (l layout) kubeconfig(who string) string { return l.path("kubeconfig", who+".yaml") }
func (l layout) log(component string) string  { return l.path("log", component+".log") }
func (l layout) containerdSocket() string     { return l.path("containerd", "containerd.sock") }
func (l layout) apiSocket() string            { return l.path("api.sock") }
func (l layout) stateFile() string            { return l.path("state.json") }
func (l layout) containerdConfigFile() string { return l.path("containerd", "config.toml") }
func (l layout) kubeletConfigFile() string    { return l.path("kubelet", "config.yaml") }
func (l layout) proxyConfigFile() string      { return l.path("kube-proxy.yaml") }
func (l layout) cniConfigDir() string         { return l.path("cni", "net.d") }
func (l layout) externalKubeconfig() string   { return l.path("kubeconfig.yaml") }
func (l layout) apiserverURL() string         { return "https://" + nodeIP + ":" + strconv.Itoa(apiPort) }
func (l layout) forwardedURL(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }
func (l layout) kubeletRoot() string          { return l.path("kubelet", "root") }
func (l layout) podLogs() string              { return l.path("kubelet", "pod-logs") }
func (l layout) etcdData() string             { return l.path("etcd") }
func (l layout) cniData() string              { return l.path("cni", "data") }
func (l layout) containerdRoot() string       { return l.path("containerd", "root") }
func (l layout) containerdState() string      { return l.path("containerd", "state") }
func (l layout) containerdOpt() string        { return l.path("containerd", "opt") }

// kubeconfig is a client configuration for one user, its credentials
// inline so that the file alone is enough for kubectl and client-go.
func kubeconfig(server string, caPEM, certPEM, keyPEM []byte, user string) []byte {
	enc := base64.StdEncoding.EncodeToString
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: msbench
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: msbench
  context:
    cluster: msbench
    user: %s
current-context: msbench
`, server, enc(caPEM), user, enc(certPEM), enc(keyPEM), user))
}

// containerdConfig keeps containerd's files under the state directory
// wherever it lets them be moved (1.6 keeps shim and runc state under
// /run/containerd whatever it is told; Down removes those).
func containerdConfig(l layout) []byte {
	return []byte(fmt.Sprintf(`version = 2
root = %q
state = %q

[grpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # runc cannot set the sandbox's oom_score_adj (-998) without
  # CAP_SYS_RESOURCE, which this machine's bounding set lacks.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state directory, not the system's.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, l.containerdRoot(), l.containerdState(), l.containerdSocket(), l.containerdOpt(),
		pauseImage, cniBinDir, l.cniConfigDir()))
}

// cniConfig is the pods' network: a bridge in the cluster's namespace,
// addresses from host-local with its data under the state directory (its
// default is /var/lib/cni/networks), and no masquerading, since nothing is
// to leave the namespace.
func cniConfig(l layout) []byte {
	return []byte(fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "msbench",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "loopback"}
  ]
}
`, l.cniData(), podCIDR, podGateway))
}

// kubeletConfig: cgroupfs on this cgroup v1 machine; oomScoreAdj 0 because
// the kubelet may not lower its own score without CAP_SYS_RESOURCE; the
// eviction and image collection thresholds out of the way, since the disk
// is shared with everything else on the machine and the images are
// imported, never pulled back.
func kubeletConfig(l layout) []byte {
	return []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
oomScoreAdj: 0
failSwapOn: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
resolvConf: ""
clusterDomain: cluster.local
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
registerNode: true
`, nodeIP, l.pki("ca.crt"), l.containerdSocket(), l.podLogs()))
}

// proxyConfig runs kube-proxy in iptables mode, its rules in the cluster's
// namespace. Of the sysctls it writes, nf_conntrack_max (and the
// nf_conntrack module's hashsize) is the machine's, read-only in any
// other namespace: maxPerCore 0 leaves it alone. The TCP timeouts and
// route_localnet it sets are the namespace's own and go with it.
func proxyConfig(l layout) []byte {
	return []byte(fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
clusterCIDR: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
`, l.kubeconfig("kube-proxy"), nodeName, podCIDR, nodeIP))
}
