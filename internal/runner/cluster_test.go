package runner

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
)

// What a cluster cannot do is refused before anything starts, naming the
// step, event or section; the profiles meant for a cluster pass.
func TestRefusedOnCluster(t *testing.T) {
	for _, tc := range []struct {
		study, profile string
		freeze         bool
		want           []string // "" for none
		hosts          bool
	}{
		{"ipc", "", false, []string{"step fault-pause-service", "event pause reviews", "cannot pause a pod", "event resume reviews"}, false},
		{"ipc", "cluster", false, nil, false},
		{"faas-gateway", "quick", false, nil, false},
		{"faas-gateway", "quick", true, []string{"idle: freeze", "--idle run"}, false},
		// Hosts go to nodes of their own (kubehosts), checked against the
		// cluster's nodes once it is reached.
		{"faas-gateway", "quick", false, nil, true},
	} {
		t.Run(tc.study+"/"+tc.profile, func(t *testing.T) {
			s, err := study.Load("../../studies/"+tc.study+"/study.yaml", tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			s.Interleave.Freeze = tc.freeze
			if tc.hosts {
				s.Hosts = []*study.Host{{Name: "edge", Services: []string{"gateway"}}, {Name: "functions", Services: []string{"rpc"}}}
			}
			err = refuseOnCluster(s)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("not refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q: %v", w, err)
				}
			}
		})
	}
}

// With --registry the run's images are pushed, and its pods name them by
// digest and pull them when the node lacks them.
func TestImagesPushedToARegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	store := &image.Store{Dir: t.TempDir()}
	layer := t.TempDir()
	if err := os.WriteFile(filepath.Join(layer, "server"), []byte("ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := store.Build(ctx, image.Spec{Layers: []image.Layer{{Copies: []image.Copy{{Src: layer, Dest: "/app"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	b := studyimage.Built{Spec: studyimage.Spec{Name: "study-svc"}, Image: img, Ref: studyimage.Registry + "/study-svc:" + img.Digest.Hex[:12]}
	c := &clusterLab{opts: Cluster{Registry: host + "/runs/"}}
	if err := c.place(ctx, []studyimage.Built{b}); err != nil {
		t.Fatal(err)
	}
	ref := c.runRef(b)
	if want := host + "/runs/study-svc@" + img.Digest.String(); ref != want {
		t.Fatalf("pods name the image %s, want %s", ref, want)
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := image.Pull(ctx, parsed)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := got.Digest(); err != nil || d != img.Digest {
		t.Errorf("pulled %s: %s %v, pushed %s", ref, d, err, img.Digest)
	}
	if p := studyimage.PullPolicy(ref); p != corev1.PullIfNotPresent {
		t.Errorf("pull policy %s for a pushed image", p)
	}
}

// The placement's CPUs are reserved only where every pod that runs at
// once fits: all the variants' deployments when the run interleaves,
// each alone when it does not.
func TestGrantCountsTheDeploymentsUpAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cpus       string // the one node's allocatable
		sequential bool
		reserved   bool
	}{
		{"a large node", "64", false, true},
		// faas-gateway places the generator, the gateway and the RPC
		// server on a core each: three CPUs hold one deployment, not
		// its every variant at once.
		{"interleaved on three", "3", false, false},
		{"sequential on three", "3", true, true},
		{"sequential on two", "2", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := study.Load("../../studies/faas-gateway/study.yaml", "quick")
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range s.Load.Steps {
				st.Interleaved = st.Interleaved && !tc.sequential
			}
			place, err := planPlacement(s, placement.CPUs{0, 1, 2}, false)
			if err != nil {
				t.Fatal(err)
			}
			r := &runner{study: s, opts: Options{Log: io.Discard}}
			r.place = place
			c := &clusterLab{}
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node"}, Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tc.cpus)},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			}}
			gen, err := c.grant(context.Background(), fake.NewSimpleClientset(n), r, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := gen == 1 && c.cpus["gateway"] == 1 && c.refused == ""; got != tc.reserved {
				t.Fatalf("reserved: %v (generator %g, services %v, refused %q), want %v", got, gen, c.cpus, c.refused, tc.reserved)
			}
			if !tc.reserved && (gen != 0 || c.cpus != nil || !strings.Contains(c.refused, "cannot all be granted")) {
				t.Fatalf("not reserved, but generator %g, services %v, refused %q", gen, c.cpus, c.refused)
			}
		})
	}
}
