package cluster

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestKubeconfigCarriesCredentials(t *testing.T) {
	data := kubeconfig("https://127.0.0.1:1234", []byte("CA"), []byte("CERT"), []byte("KEY"), "someone")
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string
				CA     string `yaml:"certificate-authority-data"`
			}
		}
		Users []struct {
			Name string
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			}
		}
		Current string `yaml:"current-context"`
	}
	if err := yaml.Unmarshal(data, &kc); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if len(kc.Clusters) != 1 || kc.Clusters[0].Cluster.Server != "https://127.0.0.1:1234" || dec(kc.Clusters[0].Cluster.CA) != "CA" {
		t.Errorf("clusters = %+v", kc.Clusters)
	}
	if len(kc.Users) != 1 || kc.Users[0].Name != "someone" || dec(kc.Users[0].User.Cert) != "CERT" || dec(kc.Users[0].User.Key) != "KEY" {
		t.Errorf("users = %+v", kc.Users)
	}
	if kc.Current != "msbench" {
		t.Errorf("current context %q", kc.Current)
	}
}

// absPaths finds the absolute paths a configuration names.
var absPaths = regexp.MustCompile(`(?:^|[\s"=:])(/[A-Za-z0-9_./-]+)`)

// TestConfigsStayInTheStateDir: every path the components are told to
// write must be under the state directory, which Down removes; reading
// the CNI plugins from the system is the one exception.
func TestConfigsStayInTheStateDir(t *testing.T) {
	l := layout{"/state/dir"}
	for name, cfg := range map[string][]byte{
		"containerd": containerdConfig(l),
		"kubelet":    kubeletConfig(l),
		"cni":        cniConfig(l),
		"kube-proxy": proxyConfig(l),
	} {
		t.Run(name, func(t *testing.T) {
			paths := absPaths.FindAllStringSubmatch(string(cfg), -1)
			if len(paths) == 0 {
				t.Fatal("no paths found: the test cannot see them")
			}
			for _, m := range paths {
				if p := "/" + strings.TrimLeft(m[1], "/"); !strings.HasPrefix(p, l.dir+"/") && p != cniBinDir {
					t.Errorf("path %s outside the state directory", p)
				}
			}
		})
	}
}

func TestContainerdConfigPassesTheMachinesLimits(t *testing.T) {
	cfg := string(containerdConfig(layout{"/s"}))
	for _, want := range []string{
		"restrict_oom_score_adj = true",
		`sandbox_image = "` + pauseImage + `"`,
		"SystemdCgroup = false",
		"netns_mounts_under_state_dir = true",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("containerd config lacks %s", want)
		}
	}
}

func TestKubeletConfig(t *testing.T) {
	var cfg map[string]any
	if err := yaml.Unmarshal(kubeletConfig(layout{"/s"}), &cfg); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"kind":         "KubeletConfiguration",
		"cgroupDriver": "cgroupfs",
		"oomScoreAdj":  0,
		"address":      nodeIP,
		"readOnlyPort": 0,
	} {
		if cfg[key] != want {
			t.Errorf("%s = %v, want %v", key, cfg[key], want)
		}
	}
}

// kube-proxy's settings that would write the machine's sysctls (its
// conntrack table size) are off; the rules' local traffic is the pods'.
func TestProxyConfig(t *testing.T) {
	var cfg struct {
		Kind, Mode       string
		ClusterCIDR      string `yaml:"clusterCIDR"`
		HostnameOverride string `yaml:"hostnameOverride"`
		OOMScoreAdj      *int   `yaml:"oomScoreAdj"`
		ClientConnection struct {
			Kubeconfig string
		} `yaml:"clientConnection"`
		Conntrack struct {
			MaxPerCore *int `yaml:"maxPerCore"`
			Min        *int
		}
	}
	if err := yaml.Unmarshal(proxyConfig(layout{"/s"}), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Kind != "KubeProxyConfiguration" || cfg.Mode != "iptables" || cfg.ClusterCIDR != podCIDR || cfg.HostnameOverride != nodeName {
		t.Errorf("config = %+v", cfg)
	}
	if cfg.ClientConnection.Kubeconfig != "/s/kubeconfig/kube-proxy.yaml" {
		t.Errorf("kubeconfig %q", cfg.ClientConnection.Kubeconfig)
	}
	// A nil maxPerCore would be kube-proxy's default, 32768 a core.
	if cfg.Conntrack.MaxPerCore == nil || *cfg.Conntrack.MaxPerCore != 0 {
		t.Errorf("conntrack.maxPerCore = %v, want 0 (nf_conntrack_max is the machine's)", cfg.Conntrack.MaxPerCore)
	}
	if cfg.OOMScoreAdj == nil || *cfg.OOMScoreAdj != 0 {
		t.Errorf("oomScoreAdj = %v, want 0 (lowering it needs CAP_SYS_RESOURCE)", cfg.OOMScoreAdj)
	}
}

func TestCNIConfig(t *testing.T) {
	var cfg struct {
		Plugins []struct {
			Type   string
			IPMasq bool `json:"ipMasq"`
			IPAM   struct {
				Type    string
				DataDir string `json:"dataDir"`
				Ranges  [][]struct{ Subnet string }
			}
		}
	}
	if err := json.Unmarshal(cniConfig(layout{"/s"}), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Plugins) != 2 || cfg.Plugins[0].Type != "bridge" || cfg.Plugins[1].Type != "loopback" {
		t.Fatalf("plugins = %+v", cfg.Plugins)
	}
	br := cfg.Plugins[0]
	if br.IPMasq || br.IPAM.DataDir != "/s/cni/data" || br.IPAM.Ranges[0][0].Subnet != podCIDR {
		t.Errorf("bridge = %+v", br)
	}
}

// TestStateDirectoryTooDeepForSockets: a state directory whose sockets
// would pass containerd's limit is refused, naming the socket and the
// longest directory it may be; the default one and one of exactly that
// length pass.
func TestStateDirectoryTooDeepForSockets(t *testing.T) {
	def, err := stateLayout(DefaultStateDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := def.checkSockets(); err != nil {
		t.Errorf("the default state directory: %v", err)
	}
	room := def.room()
	fits := layout{"/" + strings.Repeat("d", room-1)}
	if err := fits.checkSockets(); err != nil {
		t.Errorf("a state directory of %d bytes: %v", room, err)
	}
	deep := layout{fits.dir + "x"}
	err = deep.checkSockets()
	if err == nil || !strings.Contains(err.Error(), "kubelet.sock would be 105 bytes") || !strings.Contains(err.Error(), fmt.Sprintf("at most %d bytes", room)) {
		t.Errorf("a state directory of %d bytes: %v, want the longest socket named and %d bytes offered", room+1, err, room)
	}
}
